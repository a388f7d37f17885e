// `cache build` with a cache path in a directory the user cannot write (or in one it cannot
// create) still succeeds, compiling in memory, with one warning, and creates nothing. As in
// readonly_cache_test.cpp, the CLI runs as `nobody` so that permissions hold.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "support/cli_process.h"

namespace smla::cli_test {
namespace {

TEST(CacheBuild, UnwritableDirectoryDegradesToMemoryWithOneWarning) {
  TempDir dir;
  const std::string deployment = write_small_deployment(dir, {"swa"});
  const std::string locked = dir.file("locked");
  ASSERT_TRUE(std::filesystem::create_directory(locked));
  ASSERT_EQ(chmod(locked.c_str(), 0555), 0);
  for (const std::string& db : {locked + "/cache.sqlite", locked + "/smla/cache.sqlite"}) {
    SCOPED_TRACE(db);
    const CliResult build = run_cli(
        {"cache", "build", "--deployment", deployment, "--arch", "sm_90a", "--json", "--cache", db},
        CliOptions{{}, /*as_nobody=*/true});
    ASSERT_EQ(build.exit_code, 0) << build.err;
    const nlohmann::json summary = build.json();
    EXPECT_FALSE(summary.at("persistent").get<bool>());
    EXPECT_EQ(summary.at("compiled").get<int>(), summary.at("kernels").get<int>());
    EXPECT_EQ(count_warnings(build.err), 1) << build.err;
    EXPECT_TRUE(std::filesystem::is_empty(locked));
  }
}

}  // namespace
}  // namespace smla::cli_test
