// `cache build` without --arch on a machine without a GPU builds for every arch of the arch
// table, Hopper included: a deployment prepared on a build machine serves whichever GPU it lands
// on. (With a GPU it builds for that GPU's arch; the test then skips.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/arch.h"
#include "support/cli_process.h"

namespace smla::cli_test {
namespace {

TEST(CacheBuild, WithoutAGpuBuildsForEveryArch) {
  if (run_cli({"info"}).out.find("no GPU") == std::string::npos) {
    GTEST_SKIP() << "a GPU is present: cache build targets its arch";
  }
  TempDir dir;
  const std::string deployment = write_small_deployment(dir, {"swa"});
  const CliResult build = run_cli({"cache", "build", "--deployment", deployment, "--json",
                                   "--cache", dir.file("cache.sqlite")});
  ASSERT_EQ(build.exit_code, 0) << build.err;
  std::vector<std::string> every_arch;
  for (const ArchSpec& arch : arch_table()) every_arch.push_back(arch.name);
  EXPECT_EQ(build.json().at("archs").get<std::vector<std::string>>(), every_arch) << build.out;
  EXPECT_NE(build.out.find("sm_90a"), std::string::npos);
}

}  // namespace
}  // namespace smla::cli_test
