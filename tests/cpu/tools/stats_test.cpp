// `cache stats` reports the totals of the cache file it was pointed at.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/cli_process.h"

namespace smla::cli_test {
namespace {

TEST(CacheStats, ReportsTheFilesTotals) {
  TempDir dir;
  const std::string db = dir.file("cache.sqlite");
  const nlohmann::json built = build_small_cache(dir, db);
  ASSERT_FALSE(built.is_null());

  const CliResult stats = run_cli({"cache", "stats", "--json", "--cache", db});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  const nlohmann::json s = stats.json();
  ASSERT_FALSE(s.is_discarded()) << stats.out;
  EXPECT_EQ(s.at("kernels"), built.at("kernels"));
  EXPECT_EQ(s.at("cubin_bytes"), built.at("cubin_bytes"));
  EXPECT_EQ(s.at("tuning_rows").get<int64_t>(), 0);
  EXPECT_EQ(s.at("path"), db);
  EXPECT_TRUE(s.at("persistent").get<bool>());
  EXPECT_GE(s.at("file_bytes").get<int64_t>(), s.at("cubin_bytes").get<int64_t>());

  const CliResult text = run_cli({"cache", "stats", "--cache", db});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find(db), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(std::to_string(built.at("cubin_bytes").get<int64_t>())),
            std::string::npos)
      << text.out;
}

}  // namespace
}  // namespace smla::cli_test
