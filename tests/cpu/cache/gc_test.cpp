// gc drops kernels of other toolchain fingerprints, then evicts the least recently used until
// the cubins fit the bound.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cpu/cache/cache_test_support.h"
#include "support/store_reads.h"

namespace smla::cache_test {
namespace {

constexpr int64_t kCubinBytes = 64 * 1024;

std::vector<int> kernels_left(CubinStore& store) {
  std::vector<int> left;
  for (int index = 0; index < 5; ++index) {
    if (store.find(test_entry(index).id)) left.push_back(index);
  }
  return left;
}

TEST(CubinStoreGc, RemovesOtherFingerprintsThenLeastRecentlyUsed) {
  TempDir dir;
  std::string path = dir.file("cache.sqlite");
  Logger log;
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  std::atomic<int> calls{0};
  std::vector<uint8_t> cubin;
  // Kernel 0 is from an older toolchain; 1..4 were last used at these times.
  ASSERT_TRUE(store->get_or_compile(test_entry(0, "fp-old"),
                                    counting_compile(0, &calls, kCubinBytes), &cubin));
  const int64_t last_used[] = {0, 100, 300, 200, 400};
  for (int index = 1; index < 5; ++index) {
    ASSERT_TRUE(store->get_or_compile(test_entry(index, "fp-new"),
                                      counting_compile(index, &calls, kCubinBytes), &cubin));
    sql_exec(path, fmt::format("UPDATE kernels SET last_used = {} WHERE id = {}", last_used[index],
                               static_cast<int64_t>(test_entry(index).id)));
  }
  int64_t file_bytes_before = test::stats_of(*store).file_bytes;
  {
    GcReport report = test::collected(*store, -1, "");  // no bound, no fingerprint: nothing to do
    EXPECT_EQ(report.removed, 0);
    EXPECT_EQ(report.bytes_before, 5 * kCubinBytes);
    EXPECT_EQ(report.bytes_after, 5 * kCubinBytes);
  }
  {
    // Room for two and a half: the fingerprint takes 0, then the oldest (1, then 3) go.
    GcReport report = test::collected(*store, 5 * kCubinBytes / 2, "fp-new");
    EXPECT_EQ(report.removed, 3);
    EXPECT_EQ(report.bytes_before, 5 * kCubinBytes);
    EXPECT_EQ(report.bytes_after, 2 * kCubinBytes);
  }
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM kernels"), 2);
  EXPECT_EQ(kernels_left(*store), (std::vector<int>{2, 4}));
  {
    GcReport report = test::collected(*store, 0, "fp-new");
    EXPECT_EQ(report.removed, 2);
    EXPECT_EQ(report.bytes_after, 0);
  }
  // The freed pages went back to the file system.
  EXPECT_LT(test::stats_of(*store).file_bytes, file_bytes_before / 2);
  EXPECT_TRUE(store->verify().clean());
}

TEST(CubinStoreGc, MemoryStoreEvictsInOrderOfUse) {
  Logger log;
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(""), log);
  std::atomic<int> calls{0};
  std::vector<uint8_t> cubin;
  for (int index = 0; index < 5; ++index) {
    ASSERT_TRUE(store->get_or_compile(test_entry(index, index == 0 ? "fp-old" : "fp-new"),
                                      counting_compile(index, &calls, kCubinBytes), &cubin));
  }
  // Use order, oldest first: 1, 3, 2, 4 (each find refreshes its kernel).
  for (int index : {1, 3, 2, 4}) ASSERT_TRUE(store->find(test_entry(index).id).has_value());
  GcReport report = test::collected(*store, 5 * kCubinBytes / 2, "fp-new");
  EXPECT_EQ(report.removed, 3);
  EXPECT_EQ(report.bytes_before, 5 * kCubinBytes);
  EXPECT_EQ(report.bytes_after, 2 * kCubinBytes);
  EXPECT_EQ(kernels_left(*store), (std::vector<int>{2, 4}));
}

}  // namespace
}  // namespace smla::cache_test
