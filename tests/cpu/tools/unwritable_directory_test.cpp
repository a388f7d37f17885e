// `cache build` with a cache path in a directory the user cannot write (or in one it cannot
// create) compiles in memory with one warning, creates nothing, and exits 1 naming the reason,
// or 0 with --memory-ok (a dry run). As in readonly_cache_test.cpp, the CLI runs as `nobody` so
// that permissions hold.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "support/cli_process.h"

namespace smla::cli_test {
namespace {

TEST(CacheBuild, UnwritableDirectoryFailsUnlessMemoryIsOk) {
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
    EXPECT_EQ(build.exit_code, 1) << build.err;
    const nlohmann::json summary = build.json();
    EXPECT_FALSE(summary.at("persistent").get<bool>());
    EXPECT_EQ(summary.at("cache").get<std::string>(), db);
    EXPECT_EQ(summary.at("compiled").get<int>(), summary.at("kernels").get<int>());
    EXPECT_EQ(count_warnings(build.err), 1) << build.err;
    EXPECT_NE(build.err.find("not kept in the cache: "), std::string::npos)
        << build.err;
    EXPECT_TRUE(std::filesystem::is_empty(locked));
    const CliResult dry_run =
        run_cli({"cache", "build", "--deployment", deployment, "--arch", "sm_90a", "--memory-ok",
                 "--cache", db},
                CliOptions{{}, /*as_nobody=*/true});
    EXPECT_EQ(dry_run.exit_code, 0) << dry_run.err;
  }
}

}  // namespace
}  // namespace smla::cli_test
