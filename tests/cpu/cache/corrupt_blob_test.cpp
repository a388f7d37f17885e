// A stored cubin whose bytes no longer match their xxh64 is reported, deleted and rebuilt.
#include <gtest/gtest.h>

#include "cpu/cache/cache_test_support.h"

namespace smla::cache_test {
namespace {

TEST(CubinStoreCorruptBlob, FlippedByteIsWarnedDeletedAndRecompiled) {
  TempDir dir;
  std::string path = dir.file("cache.sqlite");
  Logger log;
  std::atomic<int> calls{0};
  std::vector<uint8_t> cubin;
  {
    std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
    ASSERT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin));
    ASSERT_TRUE(store->get_or_compile(test_entry(1), counting_compile(1, &calls), &cubin));
  }
  flip_cubin_byte(path, test_entry(0).id, 1234);

  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  testing::internal::CaptureStderr();
  EXPECT_FALSE(store->find(test_entry(0).id).has_value());
  std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_warnings(warnings), 1) << warnings;
  EXPECT_NE(warnings.find(test_entry(0).key_text), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("xxh64"), std::string::npos) << warnings;

  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM kernels"), 1);  // only the bad one went
  EXPECT_TRUE(store->persistent());
  ASSERT_TRUE(store->find(test_entry(1).id).has_value());

  bool compiled = false;
  ASSERT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin, &compiled));
  EXPECT_TRUE(compiled);
  EXPECT_EQ(cubin, test_cubin(0));
  EXPECT_EQ(calls, 3);
  EXPECT_TRUE(store->verify().clean());
}

TEST(CubinStoreCorruptBlob, GetOrCompileRebuildsAFlippedCubinDirectly) {
  TempDir dir;
  std::string path = dir.file("cache.sqlite");
  Logger log;
  std::atomic<int> calls{0};
  std::vector<uint8_t> cubin;
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  ASSERT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin));
  flip_cubin_byte(path, test_entry(0).id, 0);

  testing::internal::CaptureStderr();
  bool compiled = false;
  ASSERT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin, &compiled));
  EXPECT_EQ(count_warnings(testing::internal::GetCapturedStderr()), 1);
  EXPECT_TRUE(compiled);
  EXPECT_EQ(cubin, test_cubin(0));
  EXPECT_EQ(*store->find(test_entry(0).id), test_cubin(0));
}

}  // namespace
}  // namespace smla::cache_test
