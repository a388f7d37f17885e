// `cache gc` removes the kernels of other toolchains, then evicts least recently used kernels
// down to --max-size (bytes, or with a K/M/G suffix): --max-size 0 empties the cache.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/cli_process.h"

namespace smla::cli_test {
namespace {

int64_t kernels_in(const std::string& db) {
  return run_cli({"cache", "stats", "--json", "--cache", db}).json().at("kernels").get<int64_t>();
}

TEST(CacheGc, RemovesOtherToolchainsThenEvictsToTheBound) {
  TempDir dir;
  const std::string db = dir.file("cache.sqlite");
  const nlohmann::json built = build_small_cache(dir, db);
  ASSERT_FALSE(built.is_null());
  const int64_t kernels = built.at("kernels").get<int64_t>();
  {
    SCOPED_TRACE("a bound above the total keeps everything");
    const CliResult gc = run_cli({"cache", "gc", "--max-size", "1G", "--cache", db});
    EXPECT_EQ(gc.exit_code, 0) << gc.err;
    EXPECT_NE(gc.out.find("removed 0 kernels"), std::string::npos) << gc.out;
    EXPECT_EQ(kernels_in(db), kernels);
  }
  {
    SCOPED_TRACE("a kernel of another toolchain goes whatever the bound");
    const std::string id = run_cli({"cache", "ls", "--json", "--cache", db}).json()[0].at("id");
    sql_exec(db, "UPDATE kernels SET fingerprint = 'an older toolchain' WHERE id = " +
                     std::to_string(static_cast<int64_t>(parse_hex_id(id))));
    const CliResult gc = run_cli({"cache", "gc", "--cache", db});
    EXPECT_EQ(gc.exit_code, 0) << gc.err;
    EXPECT_NE(gc.out.find("removed 1 kernels"), std::string::npos) << gc.out;
    EXPECT_EQ(kernels_in(db), kernels - 1);
  }
  {
    SCOPED_TRACE("--max-size 0 removes everything");
    const CliResult gc = run_cli({"cache", "gc", "--max-size", "0", "--cache", db});
    EXPECT_EQ(gc.exit_code, 0) << gc.err;
    EXPECT_NE(gc.out.find(fmt::format("removed {} kernels", kernels - 1)), std::string::npos)
        << gc.out;
    EXPECT_NE(gc.out.find("(0 bytes) after"), std::string::npos) << gc.out;
    EXPECT_EQ(kernels_in(db), 0);
  }
  {
    SCOPED_TRACE("a size that is not one");
    const CliResult gc = run_cli({"cache", "gc", "--max-size", "lots", "--cache", db});
    EXPECT_NE(gc.exit_code, 0);
    EXPECT_NE(gc.err.find("lots"), std::string::npos) << gc.err;
  }
}

}  // namespace
}  // namespace smla::cli_test
