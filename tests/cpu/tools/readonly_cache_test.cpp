// `cache build` on a cache file the user may not write: the kernels in it are found (nothing
// compiled, exit 0); kernels it lacks are compiled into memory only, which exits 1 naming the
// file and the fix unless --memory-ok asks for a dry run; the file is left as it was either way,
// and `cache verify` still checks it (read-only). ls, stats and export read it too. The tests run
// as root, which ignores permission bits, so the CLI runs as `nobody`.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "support/cli_process.h"

namespace smla::cli_test {
namespace {

TEST(CacheBuild, ReadOnlyFileIsUsedReadOnly) {
  TempDir dir;
  const std::string db = dir.file("cache.sqlite");
  const std::string swa = write_small_deployment(dir, {"swa"});
  ASSERT_EQ(
      run_cli({"cache", "build", "--deployment", swa, "--arch", "sm_90a", "--cache", db}).exit_code,
      0);
  ASSERT_EQ(chmod(db.c_str(), 0444), 0);
  const std::string before = read_file_bytes(db);
  const CliOptions nobody{{}, /*as_nobody=*/true};
  {
    SCOPED_TRACE("every kernel is in the file");
    const CliResult build = run_cli(
        {"cache", "build", "--deployment", swa, "--arch", "sm_90a", "--json", "--cache", db},
        nobody);
    ASSERT_EQ(build.exit_code, 0) << build.err;
    const nlohmann::json summary = build.json();
    EXPECT_EQ(summary.at("compiled").get<int>(), 0);
    EXPECT_EQ(summary.at("cached").get<int>(), summary.at("kernels").get<int>());
    EXPECT_TRUE(summary.at("persistent").get<bool>());
    EXPECT_EQ(summary.at("cache").get<std::string>(), db);
    EXPECT_EQ(count_warnings(build.err), 1) << build.err;
    EXPECT_NE(build.err.find("using it read-only"), std::string::npos) << build.err;
  }
  // The SWA layer's kernels and more: the CSA layer's are not in the file.
  const std::string more = dir.file("more.json");
  {
    std::ofstream file(more);
    file << R"({"name": "more", "heads": 16, "q_lens": [1], "layers": [
      {"name": "csa", "sources": [{"page_size": 256, "width": 128}, {"page_size": 64, "width": 512}]}]})";
  }
  {
    SCOPED_TRACE("kernels missing from the file");
    const CliResult build = run_cli(
        {"cache", "build", "--deployment", more, "--arch", "sm_90a", "--json", "--cache", db},
        nobody);
    EXPECT_EQ(build.exit_code, 1) << build.err;
    EXPECT_FALSE(build.json().at("persistent").get<bool>()) << build.out;
    EXPECT_NE(build.err.find("not kept in the cache: this user may not write " + db),
              std::string::npos)
        << build.err;
    EXPECT_NE(build.err.find("--memory-ok"), std::string::npos) << build.err;
  }
  {
    SCOPED_TRACE("a dry run");
    const CliResult build = run_cli({"cache", "build", "--deployment", more, "--arch", "sm_90a",
                                     "--json", "--memory-ok", "--cache", db},
                                    nobody);
    EXPECT_EQ(build.exit_code, 0) << build.err;
    EXPECT_FALSE(build.json().at("persistent").get<bool>()) << build.out;
    EXPECT_EQ(build.json().at("cache").get<std::string>(), db) << build.out;
  }
  EXPECT_EQ(read_file_bytes(db), before);

  const CliResult verify = run_cli({"cache", "verify", "--cache", db}, nobody);
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("all clean"), std::string::npos) << verify.out;
  EXPECT_EQ(read_file_bytes(db), before);
}

// ls, stats and export of a cache this user may not write read it as a system cache is read
// (they opened it as a writer and showed it empty), and leave it as it was.
TEST(CacheInspect, ReadsAFileThisUserMayNotWrite) {
  TempDir dir;
  const std::string db = dir.file("cache.sqlite");
  const nlohmann::json built = build_small_cache(dir, db);
  ASSERT_FALSE(built.is_null());
  const int kernels = built.at("kernels").get<int>();
  ASSERT_GT(kernels, 0);
  ASSERT_EQ(chmod(db.c_str(), 0444), 0);
  const std::string before = read_file_bytes(db);
  const std::string out_dir = dir.file("exported");
  ASSERT_TRUE(std::filesystem::create_directory(out_dir));
  ASSERT_EQ(chmod(out_dir.c_str(), 0777), 0);

  const CliOptions nobody{{}, /*as_nobody=*/true};
  const CliResult ls = run_cli({"cache", "ls", "--json", "--cache", db}, nobody);
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_EQ(static_cast<int>(ls.json().size()), kernels) << ls.out;
  const CliResult stats = run_cli({"cache", "stats", "--json", "--cache", db}, nobody);
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_EQ(stats.json().at("kernels").get<int>(), kernels) << stats.out;
  EXPECT_EQ(stats.json().at("path").get<std::string>(), db) << stats.out;
  EXPECT_FALSE(stats.json().at("persistent").get<bool>());
  const CliResult exported = run_cli({"cache", "export", "--dir", out_dir, "--cache", db}, nobody);
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_NE(exported.out.find(fmt::format("exported {} cubins", kernels)), std::string::npos)
      << exported.out;
  EXPECT_EQ(read_file_bytes(db), before);
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    EXPECT_FALSE(std::filesystem::exists(db + suffix)) << suffix;
  }
}

}  // namespace
}  // namespace smla::cli_test
