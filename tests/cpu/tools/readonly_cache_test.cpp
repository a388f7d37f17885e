// `cache build` on a cache file the user may not write still succeeds, compiling in memory,
// with one warning, and leaves the file as it was; `cache verify` still checks it (read-only).
// The tests run as root, which ignores permission bits, so the CLI runs as `nobody`.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "cpu/tools/cli_test_support.h"

namespace smla::cli_test {
namespace {

TEST(CacheBuild, ReadOnlyFileDegradesToMemoryWithOneWarning) {
  TempDir dir;
  const std::string db = dir.file("cache.sqlite");
  const std::string deployment = write_small_deployment(dir, {"swa"});
  // An existing cache with nothing in it (an empty file is one).
  std::ofstream(db).close();
  ASSERT_EQ(chmod(db.c_str(), 0444), 0);
  const std::string before = read_file_bytes(db);

  const CliOptions nobody{{}, /*as_nobody=*/true};
  const CliResult build = run_cli(
      {"cache", "build", "--deployment", deployment, "--arch", "sm_90a", "--json", "--cache", db},
      nobody);
  ASSERT_EQ(build.exit_code, 0) << build.err;
  const nlohmann::json summary = build.json();
  EXPECT_FALSE(summary.at("persistent").get<bool>());
  EXPECT_EQ(summary.at("compiled").get<int>(), summary.at("kernels").get<int>());
  EXPECT_EQ(count_warnings(build.err), 1) << build.err;
  EXPECT_NE(build.err.find("read-only"), std::string::npos) << build.err;
  EXPECT_EQ(read_file_bytes(db), before);

  const CliResult verify = run_cli({"cache", "verify", "--cache", db}, nobody);
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("all clean"), std::string::npos) << verify.out;
  EXPECT_EQ(read_file_bytes(db), before);
}

}  // namespace
}  // namespace smla::cli_test
