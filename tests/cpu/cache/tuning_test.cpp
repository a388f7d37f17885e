// Tuning rows are found only for the exact (problem, bucket, device, SM count, driver) they were
// measured on, and a new measurement replaces the old one.
#include <gtest/gtest.h>

#include "cpu/cache/cache_test_support.h"
#include "support/store_reads.h"

namespace smla::cache_test {
namespace {

TuningRow measured_row() {
  TuningRow row;
  row.problem_id = 0x8000000000000001ull;  // high bit set: stored as a negative integer
  row.batch_bucket = 16;
  row.device_name = "NVIDIA H200";
  row.sm_count = 132;
  row.driver_version = 13000;
  row.config_text = "tile=64;stages=2;warps=4;";
  row.measured_us = 8.25;
  row.baseline_us = 9.5;
  row.created = 1700000000;
  return row;
}

void check_tuning_rows(CubinStore& store) {
  TuningRow row = measured_row();
  ASSERT_TRUE(store.put_tuning(row));
  std::optional<TuningRow> found = store.find_tuning(row.problem_id, 16, "NVIDIA H200", 132, 13000);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->problem_id, row.problem_id);
  EXPECT_EQ(found->batch_bucket, 16);
  EXPECT_EQ(found->device_name, "NVIDIA H200");
  EXPECT_EQ(found->sm_count, 132);
  EXPECT_EQ(found->driver_version, 13000);
  EXPECT_EQ(found->config_text, row.config_text);
  EXPECT_DOUBLE_EQ(found->measured_us, 8.25);
  EXPECT_DOUBLE_EQ(found->baseline_us, 9.5);
  EXPECT_EQ(found->created, 1700000000);

  // Any part of the lookup tuple that differs is a miss.
  EXPECT_FALSE(store.find_tuning(row.problem_id + 1, 16, "NVIDIA H200", 132, 13000));
  EXPECT_FALSE(store.find_tuning(row.problem_id, 32, "NVIDIA H200", 132, 13000));
  EXPECT_FALSE(store.find_tuning(row.problem_id, 16, "NVIDIA H100", 132, 13000));
  EXPECT_FALSE(store.find_tuning(row.problem_id, 16, "NVIDIA H200", 114, 13000));
  EXPECT_FALSE(store.find_tuning(row.problem_id, 16, "NVIDIA H200", 132, 12080));

  // Re-tuning replaces the row; other buckets are separate rows.
  row.config_text = "tile=32;stages=3;warps=4;";
  row.measured_us = 7.0;
  ASSERT_TRUE(store.put_tuning(row));
  row.batch_bucket = 32;
  ASSERT_TRUE(store.put_tuning(row));
  found = store.find_tuning(row.problem_id, 16, "NVIDIA H200", 132, 13000);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->config_text, "tile=32;stages=3;warps=4;");
  EXPECT_DOUBLE_EQ(found->measured_us, 7.0);
  EXPECT_EQ(test::stats_of(store).tuning_rows, 2);
}

TEST(CubinStoreTuning, ExactLookupAndReplacement) {
  Logger log;
  TempDir dir;
  {
    SCOPED_TRACE("file");
    std::unique_ptr<CubinStore> store =
        CubinStore::open(options_for(dir.file("cache.sqlite")), log);
    check_tuning_rows(*store);
  }
  {
    SCOPED_TRACE("memory");
    std::unique_ptr<CubinStore> store = CubinStore::open(options_for(""), log);
    check_tuning_rows(*store);
  }
  std::unique_ptr<CubinStore> reopened =
      CubinStore::open(options_for(dir.file("cache.sqlite")), log);
  EXPECT_TRUE(reopened->find_tuning(measured_row().problem_id, 32, "NVIDIA H200", 132, 13000));
}

}  // namespace
}  // namespace smla::cache_test
