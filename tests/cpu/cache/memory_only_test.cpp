// Cache path "" keeps kernels in memory: nothing on disk, no warning, and no recompiles.
#include <gtest/gtest.h>

#include "cpu/cache/cache_test_support.h"
#include "support/store_reads.h"

namespace smla::cache_test {
namespace {

TEST(CubinStoreMemoryOnly, EmptyPathKeepsKernelsInProcess) {
  Logger log;
  testing::internal::CaptureStderr();
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(""), log);
  std::atomic<int> calls{0};
  for (int round = 0; round < 3; ++round) {
    for (int index = 0; index < 2; ++index) {
      std::vector<uint8_t> cubin;
      bool compiled = false;
      ASSERT_TRUE(store->get_or_compile(test_entry(index), counting_compile(index, &calls), &cubin,
                                        &compiled));
      EXPECT_EQ(compiled, round == 0);
      EXPECT_EQ(cubin, test_cubin(index));
    }
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(calls, 2);
  EXPECT_FALSE(store->persistent());
  EXPECT_EQ(store->path(), "");

  ASSERT_TRUE(store->find(test_entry(1).id).has_value());
  EXPECT_FALSE(store->find(test_entry(2).id).has_value());
  std::vector<KernelEntry> entries = test::listed(*store);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].origin, "memory");
  EXPECT_EQ(entries[0].hits, 2);  // two get_or_compile hits
  EXPECT_EQ(entries[1].hits, 3);  // and one find

  StoreStats stats = test::stats_of(*store);
  EXPECT_EQ(stats.kernels, 2);
  EXPECT_EQ(stats.cubin_bytes, 2 * 4096);
  EXPECT_EQ(stats.hits, 5);
  EXPECT_FALSE(stats.persistent);
  EXPECT_EQ(stats.file_bytes, 0);

  VerifyReport report = store->verify();
  EXPECT_EQ(report.checked, 2);
  EXPECT_TRUE(report.clean());
}

}  // namespace
}  // namespace smla::cache_test
