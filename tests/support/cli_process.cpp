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
#include <string>
#include <utility>
#include <vector>

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

// What the child execs, built before fork: the child of a multithreaded parent may only make
// async-signal-safe calls until it execs (an allocator lock another thread held at the fork
// stays held in the child, which then hangs in its first malloc: seen under ASan).
struct ExecPlan {
  ExecPlan(std::string program, const std::vector<std::string>& args, const CliOptions& options)
      : program(std::move(program)), args(args) {
    argv.push_back(this->program.data());
    for (std::string& arg : this->args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    // The environment less SMLA_CACHE, SMLA_LOG and what the options set, then the options'.
    const auto overridden = [&](const std::string& entry) {
      const std::string name = entry.substr(0, entry.find('='));
      if (name == "SMLA_CACHE" || name == "SMLA_LOG") return true;
      for (const auto& [set, value] : options.env) {
        if (set == name) return true;
      }
      return false;
    };
    for (char** entry = environ; *entry != nullptr; ++entry) {
      if (!overridden(*entry)) env.emplace_back(*entry);
    }
    for (const auto& [name, value] : options.env) env.push_back(name + "=" + value);
    for (std::string& entry : env) envp.push_back(entry.data());
    envp.push_back(nullptr);
  }

  std::string program;
  std::vector<std::string> args, env;
  std::vector<char*> argv, envp;
};

// In the forked child: redirect, drop privileges, exec with the plan's environment. Only
// async-signal-safe calls. Never returns.
[[noreturn]] void exec_cli(const ExecPlan& plan, const CliOptions& options,
                           const std::string& out_path, const std::string& err_path) {
  const int out = open(out_path.c_str(), O_WRONLY | O_TRUNC);
  const int err = open(err_path.c_str(), O_WRONLY | O_TRUNC);
  if (out < 0 || err < 0 || dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0)
    _exit(126);
  if (!options.cwd.empty() && chdir(options.cwd.c_str()) != 0) _exit(126);
  if (options.as_nobody && !test::become_nobody_if_root()) {
    constexpr char kMessage[] = "child: cannot become nobody\n";
    (void)!write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
    _exit(126);
  }
  if (options.timeout_s > 0) alarm(options.timeout_s);  // kept across exec
  execve(plan.program.c_str(), plan.argv.data(), plan.envp.data());
  constexpr char kMessage[] = "child: cannot exec the smla CLI\n";
  (void)!write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  _exit(127);
}

}  // namespace

nlohmann::json CliResult::json() const {
  return nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
}

CliProcess::CliProcess(const std::vector<std::string>& args, const CliOptions& options)
    : out_path_(make_temp_file("out")), err_path_(make_temp_file("err")) {
  const ExecPlan plan(cli_path(), args, options);
  std::fflush(nullptr);
  started_ns_ = now_ns();
  pid_ = fork();
  if (pid_ == 0) exec_cli(plan, options, out_path_, err_path_);
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
