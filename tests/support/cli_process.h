// Helpers shared by the CLI tests: they run the real `smla` binary (this build's, or the one
// beside the test binary) as a child process, in a fresh scratch directory per test, optionally as
// `nobody` so that file permissions hold although the tests run as root.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "support/cache_file.h"
#include "support/scratch.h"

namespace smla::cli_test {

using test::flip_cubin_byte;
using test::read_file_bytes;
using test::sql_exec;
using test::TempDir;

struct CliOptions {
  // Set in the child. SMLA_CACHE and SMLA_LOG are cleared first, so the caller's environment
  // does not leak into what a test asserts.
  std::vector<std::pair<std::string, std::string>> env;
  bool as_nobody = false;  // become uid/gid 65534 when running as root
  int timeout_s = 0;       // > 0: SIGALRM ends the command after that long (for what could hang)
  std::string cwd = "";    // the directory it runs in ("": the test's)
};

struct CliResult {
  int exit_code = -1;  // 128 + signal when killed
  std::string out;
  std::string err;
  double seconds = 0;  // wall time from fork to exit
  // stdout parsed as JSON; a discarded value when it is not JSON.
  nlohmann::json json() const;
};

// A running `smla` process whose stdout and stderr go to files until it is waited for.
class CliProcess {
 public:
  CliProcess(const std::vector<std::string>& args, const CliOptions& options = {});
  ~CliProcess();  // kills and reaps a process not waited for
  CliProcess(const CliProcess&) = delete;
  CliProcess& operator=(const CliProcess&) = delete;

  void kill_with(int signal);
  CliResult wait();

 private:
  pid_t pid_ = -1;
  std::string out_path_;
  std::string err_path_;
  int64_t started_ns_ = 0;
};

CliResult run_cli(const std::vector<std::string>& args, const CliOptions& options = {});

// Warning lines ("smla warn: ...") in a process's stderr, except the compiler's register-spill
// reports: those are about the generated code, which the CLI tests do not pin down.
int count_warnings(const std::string& stderr_text);

// Writes a deployment JSON file into `dir` and returns its path. Its layers are taken from
// "swa" (one window source: one kernel per arch) and "csa" (window + compressed: a decode that
// splits, so a combine kernel as well), at q_len 1 and 8 heads: the cheapest real kernels.
std::string write_small_deployment(const TempDir& dir, const std::vector<std::string>& layers);

// Builds write_small_deployment(dir, {"swa", "csa"}) for sm_90a into `db` and returns the JSON
// summary (null after a failure, which fails the test).
nlohmann::json build_small_cache(const TempDir& dir, const std::string& db);

uint64_t parse_hex_id(const std::string& hex);

}  // namespace smla::cli_test
