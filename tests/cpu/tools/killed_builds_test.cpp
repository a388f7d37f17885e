// Builds killed with SIGKILL at any moment (an OOM kill, a node drained mid-startup) leave the
// cache consistent: `cache verify` is clean after every kill, and a later build takes over the
// dead processes' compile leases and completes.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <random>
#include <thread>

#include "support/cli_process.h"

namespace smla::cli_test {
namespace {

constexpr int kKills = 20;

// A small deployment (12 kernels of one arch, ~1.5 s) keeps 20 builds within the time of a
// test; a kill still lands before, during and between compiles and cache writes.
std::vector<std::string> build_args(const std::string& deployment, const std::string& db) {
  return {"cache",  "build", "--deployment", deployment, "--arch", "sm_100a",
          "--jobs", "2",     "--json",       "--cache",  db};
}

TEST(CacheBuild, SurvivesSigkillAtAnyMoment) {
  TempDir dir;
  const std::string deployment = write_small_deployment(dir, {"swa", "csa"});
  // The kill delays spread over the whole of an uninterrupted build, measured first.
  const CliResult reference = run_cli(build_args(deployment, dir.file("reference.sqlite")));
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  const int kernels = reference.json().at("kernels").get<int>();
  const int duration_ms = static_cast<int>(reference.seconds * 1000);

  // One database across every kill: each killed build leaves whatever it had written, WAL and
  // leases included; gc --max-size 0 empties the kernels so that the next build starts over.
  const std::string db = dir.file("cache.sqlite");
  // An empty cache to start from (an empty file is one): verify needs a file even after a kill
  // that came before the build opened one.
  std::ofstream(db).close();
  std::mt19937 rng(20240611);
  std::uniform_int_distribution<int> delay_ms(0, duration_ms);
  int killed_mid_build = 0;
  for (int i = 0; i < kKills; ++i) {
    const int delay = delay_ms(rng);
    SCOPED_TRACE(testing::Message() << "kill " << i << " after " << delay << " ms");
    CliProcess build(build_args(deployment, db));
    std::this_thread::sleep_for(std::chrono::milliseconds(delay));
    build.kill_with(SIGKILL);
    killed_mid_build += build.wait().exit_code == 128 + SIGKILL ? 1 : 0;
    const CliResult verify = run_cli({"cache", "verify", "--cache", db});
    ASSERT_EQ(verify.exit_code, 0) << verify.out << verify.err;
    ASSERT_EQ(run_cli({"cache", "gc", "--max-size", "0", "--cache", db}).exit_code, 0);
  }

  // Builds that ran faster than the measured one may have finished first; most must not have.
  EXPECT_GE(killed_mid_build, kKills / 4);

  const CliResult final_build = run_cli(build_args(deployment, db));
  ASSERT_EQ(final_build.exit_code, 0) << final_build.err;
  const nlohmann::json summary = final_build.json();
  EXPECT_EQ(summary.at("kernels").get<int>(), kernels);
  EXPECT_EQ(summary.at("compiled").get<int>(), kernels);
  const CliResult verify = run_cli({"cache", "verify", "--cache", db});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  std::printf(
      "[ measured ] uninterrupted build: %d kernels in %.2f s; %d of %d builds killed "
      "mid-build; final build %.2f s\n",
      kernels, reference.seconds, killed_mid_build, kKills, final_build.seconds);
}

}  // namespace
}  // namespace smla::cli_test
