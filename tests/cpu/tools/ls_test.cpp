// `cache ls` lists one entry per cached kernel: as JSON with every field, and as text lines;
// it and `cache stats` create no file at a path that has none.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "support/cli_process.h"

namespace smla::cli_test {
namespace {

TEST(CacheLs, OneEntryPerKernel) {
  TempDir dir;
  const std::string db = dir.file("cache.sqlite");
  const nlohmann::json built = build_small_cache(dir, db);
  ASSERT_FALSE(built.is_null());
  const size_t kernels = built.at("kernels").get<size_t>();

  const CliResult ls = run_cli({"cache", "ls", "--json", "--cache", db});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  const nlohmann::json entries = ls.json();
  ASSERT_TRUE(entries.is_array()) << ls.out;
  ASSERT_EQ(entries.size(), kernels);
  std::set<std::string> keys;
  int64_t bytes = 0;
  for (const nlohmann::json& e : entries) {
    keys.insert(e.at("key").get<std::string>());
    EXPECT_EQ(e.at("arch"), "sm_90a");
    EXPECT_EQ(e.at("id").get<std::string>().size(), 16u);
    EXPECT_GT(e.at("compile_ms").get<double>(), 0);
    EXPECT_GT(e.at("last_used").get<int64_t>(), 0);
    EXPECT_GE(e.at("hits").get<int64_t>(), 0);
    bytes += e.at("cubin_bytes").get<int64_t>();
  }
  EXPECT_EQ(keys.size(), kernels);
  EXPECT_EQ(bytes, built.at("cubin_bytes").get<int64_t>());

  const CliResult text = run_cli({"cache", "ls", "--cache", db});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  for (const std::string& key : keys) EXPECT_NE(text.out.find(key), std::string::npos) << key;
  EXPECT_EQ(std::count(text.out.begin(), text.out.end(), '\n'), static_cast<long>(kernels) + 1)
      << "a header and one line per kernel:\n"
      << text.out;
}

// Reading commands create nothing: a mistyped path is an empty cache with a warning, and
// neither the file nor its directory appears.
TEST(CacheLs, AMissingFileIsNotCreated) {
  TempDir dir;
  const std::string missing = dir.file("typo/cache.sqlite");
  for (const char* command : {"ls", "stats"}) {
    SCOPED_TRACE(command);
    const CliResult result = run_cli({"cache", command, "--json", "--cache", missing});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.err.find("no such file"), std::string::npos) << result.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("typo")));
  }
}

}  // namespace
}  // namespace smla::cli_test
