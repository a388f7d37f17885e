// verify() checks every stored blob and the file's structure, reports what is bad, deletes
// nothing.
#include <gtest/gtest.h>

#include "cpu/cache/cache_test_support.h"

namespace smla::cache_test {
namespace {

TEST(CubinStoreVerify, ReportsBadBlobsAndDeletesNothing) {
  TempDir dir;
  std::string path = dir.file("cache.sqlite");
  Logger log;
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  std::atomic<int> calls{0};
  std::vector<uint8_t> cubin;
  for (int index = 0; index < 4; ++index) {
    ASSERT_TRUE(store->get_or_compile(test_entry(index), counting_compile(index, &calls), &cubin));
  }
  {
    VerifyReport report = store->verify();
    EXPECT_EQ(report.checked, 4);
    EXPECT_TRUE(report.clean());
  }
  flip_cubin_byte(path, test_entry(2).id, 4095);
  for (int pass = 0; pass < 2; ++pass) {
    VerifyReport report = store->verify();
    EXPECT_EQ(report.checked, 4);
    ASSERT_EQ(report.bad.size(), 1u);
    EXPECT_EQ(report.bad[0], test_entry(2).key_text);
    EXPECT_EQ(sql_int(path, "SELECT count(*) FROM kernels"), 4);
  }
  EXPECT_TRUE(store->persistent());
}

}  // namespace
}  // namespace smla::cache_test
