// Eight processes building the same deployment into one fresh cache at once (eight
// tensor-parallel ranks starting together) compile each kernel exactly once between them, while
// two more run `cache gc` and `cache verify` over and over: every one of those succeeds and finds
// nothing bad, and no process waits for a lease long enough to take it over (no holder died).
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

#include "support/cli_process.h"

namespace smla::cli_test {
namespace {

constexpr int kProcesses = 8;

TEST(CacheBuild, ConcurrentProcessesCompileEachKernelOnce) {
  TempDir dir;
  const std::string db = dir.file("cache.sqlite");
  std::vector<std::unique_ptr<CliProcess>> processes;
  for (int i = 0; i < kProcesses; ++i) {
    processes.push_back(std::make_unique<CliProcess>(
        std::vector<std::string>{"cache", "build", "--preset", "dsv4-flash-tp8", "--arch",
                                 "sm_100a", "--jobs", "1", "--json", "--cache", db}));
  }
  std::atomic<bool> building{true};
  std::vector<CliResult> maintenance;  // written by the threads below, one slot each at a time
  std::mutex maintenance_mutex;
  const auto maintain = [&](std::vector<std::string> args) {
    args.insert(args.end(), {"--cache", db});
    while (building) {
      CliResult result = run_cli(args);
      std::lock_guard<std::mutex> lock(maintenance_mutex);
      maintenance.push_back(std::move(result));
    }
  };
  std::thread gc(maintain, std::vector<std::string>{"cache", "gc"});
  std::thread verifier(maintain, std::vector<std::string>{"cache", "verify"});
  int compiled = 0;
  int kernels = -1;
  double slowest = 0;
  for (int i = 0; i < kProcesses; ++i) {
    SCOPED_TRACE(i);
    const CliResult result = processes[i]->wait();
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const nlohmann::json summary = result.json();
    ASSERT_FALSE(summary.is_discarded()) << result.out;
    if (kernels < 0) kernels = summary.at("kernels").get<int>();
    EXPECT_EQ(summary.at("kernels").get<int>(), kernels);
    EXPECT_EQ(summary.at("failed").get<int>(), 0);
    EXPECT_EQ(summary.at("compiled").get<int>() + summary.at("cached").get<int>(), kernels);
    compiled += summary.at("compiled").get<int>();
    slowest = std::max(slowest, result.seconds);
    EXPECT_EQ(result.err.find("took over the compile lease"), std::string::npos) << result.err;
  }
  building = false;
  gc.join();
  verifier.join();
  EXPECT_EQ(compiled, kernels);
  EXPECT_GE(maintenance.size(), 2u);
  for (const CliResult& result : maintenance) {
    // Before the first build creates the file, there is no cache to maintain (exit 2).
    if (result.err.find("no cache file") != std::string::npos) continue;
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  }

  const CliResult verify = run_cli({"cache", "verify", "--cache", db});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  const CliResult ls = run_cli({"cache", "ls", "--json", "--cache", db});
  EXPECT_EQ(ls.json().size(), static_cast<size_t>(kernels)) << ls.out;
  std::printf("[ measured ] %d processes, %d kernels, %d compilations in all; slowest %.2f s\n",
              kProcesses, kernels, compiled, slowest);
}

}  // namespace
}  // namespace smla::cli_test
