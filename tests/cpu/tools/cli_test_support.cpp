#include "cpu/tools/cli_test_support.h"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace smla::cli_test {
namespace {

constexpr uid_t kNobody = 65534;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string make_temp_file(const char* what) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / (std::string("smla-cli-") + what + "-XXXXXX"))
          .string();
  const int fd = mkstemp(pattern.data());
  if (fd < 0) {
    ADD_FAILURE() << "mkstemp failed";
    return "/dev/null";
  }
  close(fd);
  return pattern;
}

// In the forked child: redirect, set the environment, drop privileges, exec. Never returns.
[[noreturn]] void exec_cli(const std::vector<std::string>& args, const CliOptions& options,
                           const std::string& out_path, const std::string& err_path) {
  const int out = open(out_path.c_str(), O_WRONLY | O_TRUNC);
  const int err = open(err_path.c_str(), O_WRONLY | O_TRUNC);
  if (out < 0 || err < 0 || dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0)
    _exit(126);
  unsetenv("SMLA_CACHE");
  unsetenv("SMLA_LOG");
  for (const auto& [name, value] : options.env) setenv(name.c_str(), value.c_str(), 1);
  if (options.as_nobody && geteuid() == 0 &&
      (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0)) {
    std::fprintf(stderr, "child: cannot become nobody\n");
    _exit(126);
  }
  std::vector<char*> argv;
  std::string program = SMLA_CLI_PATH;
  argv.push_back(program.data());
  std::vector<std::string> copies = args;
  for (std::string& arg : copies) argv.push_back(arg.data());
  argv.push_back(nullptr);
  execv(program.c_str(), argv.data());
  std::fprintf(stderr, "child: cannot exec %s\n", program.c_str());
  _exit(127);
}

}  // namespace

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "smla-cli-test-XXXXXX").string();
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

nlohmann::json CliResult::json() const {
  return nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
}

CliProcess::CliProcess(const std::vector<std::string>& args, const CliOptions& options)
    : out_path_(make_temp_file("out")), err_path_(make_temp_file("err")) {
  std::fflush(nullptr);
  started_ns_ = now_ns();
  pid_ = fork();
  if (pid_ == 0) exec_cli(args, options, out_path_, err_path_);
  if (pid_ < 0) ADD_FAILURE() << "fork failed";
}

CliProcess::~CliProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  unlink(out_path_.c_str());
  unlink(err_path_.c_str());
}

void CliProcess::kill_with(int signal) {
  if (pid_ > 0) kill(pid_, signal);
}

CliResult CliProcess::wait() {
  CliResult result;
  if (pid_ <= 0) return result;
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  result.seconds = static_cast<double>(now_ns() - started_ns_) / 1e9;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_file_bytes(out_path_);
  result.err = read_file_bytes(err_path_);
  return result;
}

CliResult run_cli(const std::vector<std::string>& args, const CliOptions& options) {
  CliProcess process(args, options);
  return process.wait();
}

int count_warnings(const std::string& stderr_text) {
  std::istringstream lines(stderr_text);
  int warnings = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("smla warn:", 0) == 0 && line.find(" spills registers:") == std::string::npos) {
      ++warnings;
    }
  }
  return warnings;
}

std::string write_small_deployment(const TempDir& dir, const std::vector<std::string>& layers) {
  nlohmann::json sources_of = {
      {"swa", {{{"page_size", 256}, {"width", 128}}}},
      {"csa", {{{"page_size", 256}, {"width", 128}}, {{"page_size", 64}, {"width", 512}}}}};
  nlohmann::json deployment = {{"name", "small"}, {"heads", 8}, {"q_lens", {1}}};
  for (const std::string& layer : layers) {
    deployment["layers"].push_back({{"name", layer}, {"sources", sources_of.at(layer)}});
  }
  const std::string path = dir.file("small.json");
  std::ofstream(path) << deployment.dump(1);
  return path;
}

nlohmann::json build_small_cache(const TempDir& dir, const std::string& db) {
  const CliResult build =
      run_cli({"cache", "build", "--deployment", write_small_deployment(dir, {"swa", "csa"}),
               "--arch", "sm_90a", "--json", "--cache", db});
  EXPECT_EQ(build.exit_code, 0) << build.err;
  const nlohmann::json summary = build.json();
  if (build.exit_code != 0 || summary.is_discarded()) return nullptr;
  return summary;
}

void flip_cubin_byte(const std::string& db_path, uint64_t id, int offset) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK) << db_path;
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

void sql_exec(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK) << db_path;
  sqlite3_busy_timeout(db, 10000);
  char* message = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message), SQLITE_OK)
      << sql << ": " << (message ? message : "");
  sqlite3_free(message);
  sqlite3_close(db);
}

uint64_t parse_hex_id(const std::string& hex) { return std::strtoull(hex.c_str(), nullptr, 16); }

std::string read_file_bytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

}  // namespace smla::cli_test
