#include "cpu/cache/cache_test_support.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/xorshift_bytes.h"

namespace smla::cache_test {

KernelEntry test_entry(int index, const std::string& fingerprint) {
  KernelEntry entry;
  entry.id = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(index + 1);
  entry.key_text = fmt::format("family=decode;heads={};arch=sm_90a;", index);
  entry.arch = "sm_90a";
  entry.fingerprint = fingerprint;
  return entry;
}

std::vector<uint8_t> test_cubin(int index, size_t bytes) {
  return test::xorshift_bytes(index, bytes);
}

CompileFn counting_compile(int index, std::atomic<int>* calls, size_t bytes) {
  return [index, calls, bytes](std::vector<uint8_t>* cubin, double* compile_ms) {
    ++*calls;
    *cubin = test_cubin(index, bytes);
    *compile_ms = 1.5;
    return ok_status();
  };
}

CubinStore::Options options_for(const std::string& path, const std::string& system_path) {
  CubinStore::Options options;
  options.path = path;
  options.system_path = system_path;
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
    if (!test::become_nobody_if_root()) {
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

pid_t dead_pid() {
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);  // reaped: not even a zombie is left
  return pid;
}

}  // namespace smla::cache_test
