// A hit records itself in the file: hits counts up and last_used moves to now.
#include <gtest/gtest.h>

#include <ctime>

#include "cpu/cache/cache_test_support.h"
#include "support/store_reads.h"

namespace smla::cache_test {
namespace {

TEST(CubinStoreHits, FindAndGetOrCompileRecordHitsAndLastUse) {
  TempDir dir;
  std::string path = dir.file("cache.sqlite");
  Logger log;
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  std::atomic<int> calls{0};
  std::vector<uint8_t> cubin;
  ASSERT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin));
  ASSERT_TRUE(store->get_or_compile(test_entry(1), counting_compile(1, &calls), &cubin));

  std::vector<KernelEntry> entries = test::listed(*store);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].hits, 0);  // compiling is not a hit
  EXPECT_EQ(entries[0].last_used, entries[0].created);

  // Pretend both were last used long ago, then use one of them.
  sql_exec(path, "UPDATE kernels SET last_used = 1000");
  ASSERT_TRUE(store->find(test_entry(0).id).has_value());
  ASSERT_TRUE(store->find(test_entry(0).id).has_value());
  ASSERT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin));
  EXPECT_EQ(calls, 2);

  entries = test::listed(*store);
  int64_t now = std::time(nullptr);
  EXPECT_EQ(entries[0].hits, 3);
  EXPECT_GE(entries[0].last_used, now - 5);
  EXPECT_EQ(entries[1].hits, 0);
  EXPECT_EQ(entries[1].last_used, 1000);
  EXPECT_EQ(test::stats_of(*store).hits, 3);
}

}  // namespace
}  // namespace smla::cache_test
