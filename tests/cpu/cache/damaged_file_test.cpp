// A file whose pages are damaged (not just a blob: SQLite's own structure) is reported by
// verify() and, once a read fails on it, given up with one warning that names the remedy; calls
// still succeed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cpu/cache/cache_test_support.h"

namespace smla::cache_test {
namespace {

constexpr size_t kCubinBytes = 64 * 1024;

std::string make_cache_of_three(const TempDir& dir, const std::string& name) {
  std::string path = dir.file(name);
  Logger log;
  std::atomic<int> calls{0};
  std::vector<uint8_t> cubin;
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  for (int index = 0; index < 3; ++index) {
    EXPECT_TRUE(store->get_or_compile(test_entry(index),
                                      counting_compile(index, &calls, kCubinBytes), &cubin));
  }
  return path;  // closing the store checkpointed everything into the file
}

// Overwrites the second-to-last page of `path` with zeros (an overflow page of the last cubin).
void zero_page_before_last(const std::string& path) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(static_cast<std::streamoff>(std::filesystem::file_size(path)) - 2 * 4096);
  file.write(std::string(4096, '\0').data(), 4096);
}

TEST(CubinStoreDamagedFile, ZeroedPageIsReportedAndGivenUp) {
  TempDir dir;
  std::string path = make_cache_of_three(dir, "cache.sqlite");
  zero_page_before_last(path);

  Logger log;
  testing::internal::CaptureStderr();
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  VerifyReport report = store->verify();
  std::atomic<int> calls{0};
  for (int round = 0; round < 2; ++round) {
    std::vector<uint8_t> cubin;
    ASSERT_TRUE(
        store->get_or_compile(test_entry(2), counting_compile(2, &calls, kCubinBytes), &cubin));
    EXPECT_EQ(cubin, test_cubin(2, kCubinBytes));
  }
  std::string warnings = testing::internal::GetCapturedStderr();
  ASSERT_EQ(report.bad.size(), 1u);
  EXPECT_EQ(report.bad[0].rfind("database: ", 0), 0u) << report.bad[0];
  EXPECT_NE(report.bad[0].find("malformed"), std::string::npos) << report.bad[0];
  EXPECT_EQ(count_warnings(warnings), 1) << warnings;
  EXPECT_NE(warnings.find(path + " is damaged"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("smla cache verify --repair --cache " + path), std::string::npos)
      << warnings;
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(store->persistent());
}

// The system cache is cut short under a running store, as a half-finished copy would leave it.
TEST(CubinStoreDamagedFile, TruncatedSystemCacheIsDroppedWithOneWarning) {
  TempDir dir;
  std::string system_path = make_cache_of_three(dir, "system.sqlite");
  sql_exec(system_path, "PRAGMA journal_mode = DELETE");
  Logger log;
  const CubinStore::Options options = options_for(dir.file("user.sqlite"), system_path);
  std::unique_ptr<CubinStore> store = CubinStore::open(options, log);
  std::filesystem::resize_file(system_path, std::filesystem::file_size(system_path) / 2);

  testing::internal::CaptureStderr();
  std::atomic<int> calls{0};
  for (int round = 0; round < 2; ++round) {
    std::vector<uint8_t> cubin;
    ASSERT_TRUE(
        store->get_or_compile(test_entry(2), counting_compile(2, &calls, kCubinBytes), &cubin));
    EXPECT_EQ(cubin, test_cubin(2, kCubinBytes));
  }
  std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_warnings(warnings), 1) << warnings;
  EXPECT_NE(warnings.find("no longer consulted"), std::string::npos) << warnings;
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(store->persistent());  // the user cache is unaffected
}

}  // namespace
}  // namespace smla::cache_test
