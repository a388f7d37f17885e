// A cubin damaged in the file (bit rot, a torn write) is found by `cache verify`, which names
// it (also in a write-protected file), and rebuilt by the next `cache build`, after which the cache
// is clean again.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "support/cli_process.h"

namespace smla::cli_test {
namespace {

TEST(CacheVerify, FlippedByteIsNamedAndRebuilt) {
  TempDir dir;
  const std::string db = dir.file("cache.sqlite");
  const std::vector<std::string> build = {
      "cache",  "build",  "--deployment", write_small_deployment(dir, {"swa", "csa"}),
      "--arch", "sm_90a", "--json",       "--cache",
      db};
  const CliResult first = run_cli(build);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const int kernels = first.json().at("kernels").get<int>();
  ASSERT_GT(kernels, 1);

  const nlohmann::json entries = run_cli({"cache", "ls", "--json", "--cache", db}).json();
  ASSERT_EQ(entries.size(), static_cast<size_t>(kernels));
  const nlohmann::json& victim = entries.at(1);
  flip_cubin_byte(db, parse_hex_id(victim.at("id").get<std::string>()), 100);

  const CliResult damaged = run_cli({"cache", "verify", "--cache", db});
  EXPECT_EQ(damaged.exit_code, 1) << damaged.out << damaged.err;
  EXPECT_NE(damaged.out.find(victim.at("key").get<std::string>()), std::string::npos)
      << damaged.out;
  // The same of a write-protected file, by a user who may not write it.
  ASSERT_EQ(chmod(db.c_str(), 0444), 0);
  const CliResult protected_file = run_cli({"cache", "verify", "--cache", db}, {{}, true});
  EXPECT_EQ(protected_file.exit_code, 1) << protected_file.out << protected_file.err;
  EXPECT_NE(protected_file.out.find(victim.at("key").get<std::string>()), std::string::npos)
      << protected_file.out;
  ASSERT_EQ(chmod(db.c_str(), 0644), 0);

  const CliResult rebuild = run_cli(build);
  ASSERT_EQ(rebuild.exit_code, 0) << rebuild.err;
  const nlohmann::json summary = rebuild.json();
  EXPECT_EQ(summary.at("compiled").get<int>(), 1);
  EXPECT_EQ(summary.at("cached").get<int>(), kernels - 1);
  EXPECT_NE(rebuild.err.find("xxh64"), std::string::npos) << rebuild.err;

  const CliResult clean = run_cli({"cache", "verify", "--cache", db});
  EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
}

}  // namespace
}  // namespace smla::cli_test
