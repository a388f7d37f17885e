// Kernels and tuning rows stored by one store are there for the next one that opens the file.
#include <gtest/gtest.h>

#include "cpu/cache/cache_test_support.h"

namespace smla::cache_test {
namespace {

TEST(CubinStorePersistence, ReopenedFileServesEverythingWithoutCompiling) {
  TempDir dir;
  Logger log;
  std::atomic<int> calls{0};
  TuningRow row;
  row.problem_id = 0xFEEDFACECAFEBEEFull;
  row.batch_bucket = 64;
  row.device_name = "NVIDIA H200";
  row.sm_count = 132;
  row.driver_version = 13000;
  row.config_text = "tile=64;stages=2;";
  row.measured_us = 10.5;
  row.baseline_us = 12.25;
  row.created = 1700000000;
  {
    std::unique_ptr<CubinStore> store =
        CubinStore::open(options_for(dir.file("cache.sqlite")), log);
    for (int index = 0; index < 3; ++index) {
      std::vector<uint8_t> cubin;
      ASSERT_TRUE(
          store->get_or_compile(test_entry(index), counting_compile(index, &calls), &cubin));
    }
    ASSERT_TRUE(store->put_tuning(row));
  }
  ASSERT_EQ(calls, 3);

  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(dir.file("cache.sqlite")), log);
  ASSERT_TRUE(store->persistent());
  for (int index = 0; index < 3; ++index) {
    std::vector<uint8_t> cubin;
    bool compiled = true;
    ASSERT_TRUE(store->get_or_compile(test_entry(index), counting_compile(index, &calls), &cubin,
                                      &compiled));
    EXPECT_FALSE(compiled);
    EXPECT_EQ(cubin, test_cubin(index));
  }
  EXPECT_EQ(calls, 3);
  std::optional<TuningRow> found =
      store->find_tuning(row.problem_id, 64, "NVIDIA H200", 132, 13000);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->config_text, row.config_text);
}

}  // namespace
}  // namespace smla::cache_test
