#include "cpu/cache/cache_test_support.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace smla::cache_test {

namespace {

constexpr uid_t kNobody = 65534;

}  // namespace

TempDir::TempDir() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "smla-cache-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
  chmod(pattern.c_str(), 0777);
  path_ = pattern;
}

TempDir::~TempDir() {
  // Restore write permission first: tests make directories read-only.
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(path_, ec);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec)) chmod(it->path().c_str(), 0777);
  }
  std::filesystem::remove_all(path_, ec);
}

KernelEntry test_entry(int index, const std::string& fingerprint) {
  KernelEntry entry;
  entry.id = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(index + 1);
  entry.key_text = fmt::format("family=decode;heads={};arch=sm_90a;", index);
  entry.arch = "sm_90a";
  entry.fingerprint = fingerprint;
  return entry;
}

std::vector<uint8_t> test_cubin(int index, size_t bytes) {
  std::vector<uint8_t> cubin(bytes);
  uint64_t state = 0x2545F4914F6CDD1Dull ^ static_cast<uint64_t>(index + 1);
  for (uint8_t& byte : cubin) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    byte = static_cast<uint8_t>(state);
  }
  return cubin;
}

CompileFn counting_compile(int index, std::atomic<int>* calls, size_t bytes) {
  return [index, calls, bytes](std::vector<uint8_t>* cubin, double* compile_ms) {
    ++*calls;
    *cubin = test_cubin(index, bytes);
    *compile_ms = 1.5;
    return Status::ok();
  };
}

CubinStore::Options options_for(const std::string& path) {
  CubinStore::Options options;
  options.path = path;
  options.lease_poll_ms = 5;
  return options;
}

int count_warnings(const std::string& log_text) {
  std::istringstream lines(log_text);
  int warnings = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("smla warn:", 0) == 0) ++warnings;
  }
  return warnings;
}

void sql_exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK) << path;
  sqlite3_busy_timeout(db, 10000);
  char* message = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
  EXPECT_EQ(rc, SQLITE_OK) << sql << ": " << (message ? message : "");
  sqlite3_free(message);
  sqlite3_close(db);
}

int64_t sql_int(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  int64_t value = -1;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 10000);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      value = sqlite3_column_int64(stmt, 0);
    } else {
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return value;
}

void flip_cubin_byte(const std::string& path, uint64_t id, int offset) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK) << path;
  sqlite3_blob* blob = nullptr;
  ASSERT_EQ(sqlite3_blob_open(db, "main", "kernels", "cubin", static_cast<int64_t>(id), 1, &blob),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  uint8_t byte = 0;
  EXPECT_EQ(sqlite3_blob_read(blob, &byte, 1, offset), SQLITE_OK);
  byte ^= 0x40;
  EXPECT_EQ(sqlite3_blob_write(blob, &byte, 1, offset), SQLITE_OK);
  sqlite3_blob_close(blob);
  sqlite3_close(db);
}

std::string read_file_bytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

ChildResult run_unprivileged(const std::function<std::string()>& body) {
  char log_path[] = "/tmp/smla-cache-child-XXXXXX";
  int log_fd = mkstemp(log_path);
  ChildResult result;
  if (log_fd < 0) {
    ADD_FAILURE() << "mkstemp failed";
    return result;
  }
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(log_fd, STDERR_FILENO);
    if (geteuid() == 0 &&
        (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0)) {
      std::fprintf(stderr, "child: cannot become nobody\n");
      _exit(2);
    }
    std::string failure = body();
    if (!failure.empty()) std::fprintf(stderr, "child failure: %s\n", failure.c_str());
    _exit(failure.empty() ? 0 : 1);
  }
  int wait_status = 0;
  waitpid(pid, &wait_status, 0);
  result.exit_code =
      WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
  result.stderr_text = read_file_bytes(log_path);
  close(log_fd);
  unlink(log_path);
  return result;
}

}  // namespace smla::cache_test
