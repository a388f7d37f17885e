// `smla cache build` compiles every kernel of a deployment into a fresh cache, exactly the union
// of both modes' plans of its problems, and a second run finds them all cached and is fast: what
// makes building ahead of serving worth it. A preset named with --deployment is the same
// deployment.
#include <gtest/gtest.h>

#include <set>

#include "deployments/deployment.h"
#include "plan/decode_plan.h"
#include "support/cache_file.h"
#include "support/cli_process.h"

namespace smla::cli_test {
namespace {

TEST(CacheBuild, SecondRunFindsEveryKernelCached) {
  TempDir dir;
  const std::vector<std::string> args = {
      "cache", "build",  "--preset", "dsv4-flash-tp8",        "--arch", "sm_90a", "--jobs",
      "2",     "--json", "--cache",  dir.file("cache.sqlite")};
  const CliResult first = run_cli(args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const nlohmann::json a = first.json();
  ASSERT_FALSE(a.is_discarded()) << first.out;
  const int kernels = a.at("kernels").get<int>();
  EXPECT_GT(kernels, 0);
  EXPECT_EQ(a.at("compiled").get<int>(), kernels);
  EXPECT_EQ(a.at("cached").get<int>(), 0);
  EXPECT_EQ(a.at("failed").get<int>(), 0);
  EXPECT_GT(a.at("median_compile_ms").get<double>(), 0);
  EXPECT_GT(a.at("cubin_bytes").get<int64_t>(), 0);
  EXPECT_TRUE(a.at("persistent").get<bool>());
  // Exactly the kernels of the plans, both modes, every problem (q_len variants share theirs).
  Deployment flash;
  ASSERT_TRUE(preset_deployment("dsv4-flash-tp8", 131072, &flash));
  std::set<std::string> planned;
  for (const auto& [label, problem] : flash.problems()) {
    for (const KernelKey& key : prewarm_kernels(*find_arch("sm_90a"), problem)) {
      planned.insert(key.text());
    }
  }
  std::set<std::string> cached;
  const std::string texts =
      test::sql_text(dir.file("cache.sqlite"), "SELECT group_concat(key_text, '\n') FROM kernels");
  for (size_t start = 0; start < texts.size();) {
    const size_t end = std::min(texts.find('\n', start), texts.size());
    cached.insert(texts.substr(start, end - start));
    start = end + 1;
  }
  EXPECT_EQ(cached, planned);
  EXPECT_EQ(static_cast<size_t>(kernels), planned.size());

  const CliResult second = run_cli(args);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const nlohmann::json b = second.json();
  ASSERT_FALSE(b.is_discarded()) << second.out;
  EXPECT_EQ(b.at("kernels").get<int>(), kernels);
  EXPECT_EQ(b.at("cached").get<int>(), kernels);
  EXPECT_EQ(b.at("compiled").get<int>(), 0);
  EXPECT_EQ(b.at("cubin_bytes").get<int64_t>(), a.at("cubin_bytes").get<int64_t>());
  EXPECT_LE(second.seconds, 2.0);
  // --deployment names a preset as well as a file: the same kernels.
  std::vector<std::string> by_deployment = args;
  by_deployment[2] = "--deployment";
  const CliResult third = run_cli(by_deployment);
  ASSERT_EQ(third.exit_code, 0) << third.err;
  EXPECT_EQ(third.json().at("kernels").get<int>(), kernels);
  EXPECT_EQ(third.json().at("cached").get<int>(), kernels);
  std::printf(
      "[ measured ] %d kernels compiled in %.2f s (reported %.2f s, median compile %.0f ms); "
      "second run %.3f s\n",
      kernels, first.seconds, a.at("seconds").get<double>(),
      a.at("median_compile_ms").get<double>(), second.seconds);
}

}  // namespace
}  // namespace smla::cli_test
