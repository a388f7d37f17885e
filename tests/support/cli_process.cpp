#include "support/cli_process.h"

#include <fcntl.h>
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

// The CLI of this build (SMLA_CLI_PATH), or, where the binaries were carried to another machine
// without the build tree (gpu/carry.sh), the `smla` beside this test binary.
std::string cli_path() {
  if (access(SMLA_CLI_PATH, X_OK) == 0) return SMLA_CLI_PATH;
  std::error_code ec;
  return (std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "smla").string();
}

// In the forked child: redirect, set the environment, drop privileges, exec. Never returns.
[[noreturn]] void exec_cli(std::string program, const std::vector<std::string>& args,
                           const CliOptions& options, const std::string& out_path,
                           const std::string& err_path) {
  const int out = open(out_path.c_str(), O_WRONLY | O_TRUNC);
  const int err = open(err_path.c_str(), O_WRONLY | O_TRUNC);
  if (out < 0 || err < 0 || dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0)
    _exit(126);
  if (!options.cwd.empty() && chdir(options.cwd.c_str()) != 0) _exit(126);
  unsetenv("SMLA_CACHE");
  unsetenv("SMLA_LOG");
  for (const auto& [name, value] : options.env) setenv(name.c_str(), value.c_str(), 1);
  if (options.as_nobody && !test::become_nobody_if_root()) {
    std::fprintf(stderr, "child: cannot become nobody\n");
    _exit(126);
  }
  if (options.timeout_s > 0) alarm(options.timeout_s);  // kept across exec
  std::vector<char*> argv;
  argv.push_back(program.data());
  std::vector<std::string> copies = args;
  for (std::string& arg : copies) argv.push_back(arg.data());
  argv.push_back(nullptr);
  execv(program.c_str(), argv.data());
  std::fprintf(stderr, "child: cannot exec %s\n", program.c_str());
  _exit(127);
}

}  // namespace

nlohmann::json CliResult::json() const {
  return nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
}

CliProcess::CliProcess(const std::vector<std::string>& args, const CliOptions& options)
    : out_path_(make_temp_file("out")), err_path_(make_temp_file("err")) {
  std::string program = cli_path();
  std::fflush(nullptr);
  started_ns_ = now_ns();
  pid_ = fork();
  if (pid_ == 0) exec_cli(std::move(program), args, options, out_path_, err_path_);
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

uint64_t parse_hex_id(const std::string& hex) { return std::strtoull(hex.c_str(), nullptr, 16); }

}  // namespace smla::cli_test
