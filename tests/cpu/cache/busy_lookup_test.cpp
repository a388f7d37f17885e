// A lookup while another connection holds the write lock still returns the cubin, promptly:
// recording the hit is best effort and gives up instead of waiting out busy_timeout.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>

#include "cpu/cache/cache_test_support.h"
#include "support/store_reads.h"

namespace smla::cache_test {
namespace {

TEST(CubinStoreBusyLookup, HitWhileTheFileIsWriteLockedDoesNotWaitOrFail) {
  TempDir dir;
  std::string path = dir.file("cache.sqlite");
  Logger log;
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);  // 30 s busy
  std::atomic<int> calls{0};
  std::vector<uint8_t> cubin;
  ASSERT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin));

  sqlite3* writer = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &writer), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(writer, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);

  testing::internal::CaptureStderr();
  auto start = std::chrono::steady_clock::now();
  std::optional<std::vector<uint8_t>> found = store->find(test_entry(0).id);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, test_cubin(0));
  EXPECT_LT(seconds, 1.0);
  EXPECT_TRUE(store->persistent());

  ASSERT_EQ(sqlite3_exec(writer, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(writer);
  // The lost hit stays lost; the next one is recorded.
  ASSERT_TRUE(store->find(test_entry(0).id).has_value());
  EXPECT_EQ(test::listed(*store)[0].hits, 1);
}

}  // namespace
}  // namespace smla::cache_test
