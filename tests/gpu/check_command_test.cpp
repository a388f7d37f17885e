// `smla check` on the device, as a user runs it: every case of a preset layer passes against the
// CPU reference; with --json each case reports its errors and "failed" counts the failures; the
// text form prints one PASS line a case and the count. (Its failures without a GPU and its usage
// errors are CPU tests: tests/cpu/tools.)
#include <cstdlib>
#include <iterator>
#include <string>
#include <vector>

#include "gpu_env.h"
#include "support/cli_process.h"

namespace smla::gpu_test {
namespace {

using cli_test::CliOptions;
using cli_test::CliResult;
using cli_test::run_cli;

// The child uses the round's cache (its kernels prewarmed by gpu/carry.sh), else compiles
// into memory.
CliOptions check_options() {
  CliOptions options;
  const char* cache = std::getenv("SMLA_CACHE");
  options.env = {{"SMLA_CACHE", cache != nullptr ? cache : ""}};
  options.timeout_s = 300;
  return options;
}

const std::vector<std::string> kCheckSwa = {
    "check", "--preset", "dsv4-flash-tp8", "--layer", "swa", "--rows", "1,3"};

TEST(CheckCommand, JsonReportsEveryCasesErrors) {
  SMLA_REQUIRE_GPU();
  if (!GpuEnv::get().prewarm_arch.empty()) GTEST_SKIP() << "prewarm mode: the presets are built";
  std::vector<std::string> args = kCheckSwa;
  args.push_back("--json");
  const CliResult result = run_cli(args, check_options());
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  const nlohmann::json report = result.json();
  ASSERT_TRUE(report.is_object()) << result.out;
  EXPECT_EQ(report.value("failed", -1), 0);
  const nlohmann::json& cases = report["cases"];
  ASSERT_TRUE(cases.is_array());
  // The preset's q_len 1 and 2, each at 1 and 3 requests (rows = requests x q_len), in order.
  const struct {
    const char* layer;
    int rows;
  } expected[] = {{"swa/qlen1", 1}, {"swa/qlen1", 3}, {"swa/qlen2", 2}, {"swa/qlen2", 6}};
  ASSERT_EQ(cases.size(), std::size(expected)) << result.out;
  double rel_l2_sum = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const nlohmann::json& c = cases[i];
    SCOPED_TRACE(c.dump());
    EXPECT_EQ(c.value("layer", ""), expected[i].layer);
    EXPECT_EQ(c.value("rows", 0), expected[i].rows);
    EXPECT_TRUE(c.value("passed", false));
    EXPECT_FALSE(c.contains("error"));
    const double rel_l2 = c.value("out_rel_l2", -1.0);
    EXPECT_GE(rel_l2, 0.0);
    EXPECT_LE(rel_l2, 1e-2);
    rel_l2_sum += rel_l2;
    EXPECT_EQ(c.value("nan_or_inf", -1), 0);
    EXPECT_EQ(c.value("empty_row_errors", -1), 0);
    EXPECT_EQ(c.value("elements", 0), expected[i].rows * 8 * 512);  // 8 heads of 512
  }
  // bf16 outputs of random inputs differ a little from the fp64 reference (a case whose rows
  // are all empty has 0).
  EXPECT_GT(rel_l2_sum, 0.0);
}

TEST(CheckCommand, TextPrintsAPassLineACase) {
  SMLA_REQUIRE_GPU();
  if (!GpuEnv::get().prewarm_arch.empty()) GTEST_SKIP() << "prewarm mode: the presets are built";
  const CliResult result = run_cli(kCheckSwa, check_options());
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  size_t passes = 0;
  for (size_t at = result.out.find("PASS "); at != std::string::npos;
       at = result.out.find("PASS ", at + 1)) {
    ++passes;
  }
  EXPECT_EQ(passes, 4u) << result.out;
  EXPECT_EQ(result.out.find("FAIL"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("2 problems x 2 row counts: 0 failed"), std::string::npos)
      << result.out;
}

}  // namespace
}  // namespace smla::gpu_test
