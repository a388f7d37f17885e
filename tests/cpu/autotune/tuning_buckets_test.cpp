// Batch buckets are powers of two of num_rows: a call uses the largest at or below its rows, the
// last (8192) serves every larger call, and `smla tune` times a bucket at its first and last rows.
#include <gtest/gtest.h>

#include <vector>

#include "autotune/tuning.h"

namespace smla {
namespace {

TEST(BatchBucket, LargestPowerOfTwoAtOrBelowTheRows) {
  const std::pair<int, int> cases[] = {{1, 1},       {2, 2},       {3, 2},       {4, 4},
                                       {7, 4},       {64, 64},     {127, 64},    {128, 128},
                                       {8191, 4096}, {8192, 8192}, {8193, 8192}, {1 << 24, 8192}};
  for (const auto& [rows, bucket] : cases) EXPECT_EQ(batch_bucket(rows), bucket) << rows;
}

TEST(BatchBucket, EveryBucketUpToTheLargestRows) {
  EXPECT_EQ(batch_buckets(1), std::vector<int>({1}));
  EXPECT_EQ(batch_buckets(5), std::vector<int>({1, 2, 4}));
  EXPECT_EQ(batch_buckets(256), std::vector<int>({1, 2, 4, 8, 16, 32, 64, 128, 256}));
  EXPECT_EQ(batch_buckets(300).back(), 256);
  EXPECT_EQ(batch_buckets(1 << 20).back(), kMaxBatchBucket);
  EXPECT_EQ(batch_buckets(1 << 20).size(), 14u);
}

TEST(BatchBucket, LastRowsOfABucketAreAllItServes) {
  EXPECT_EQ(bucket_last_rows(1, 256), 1);
  EXPECT_EQ(bucket_last_rows(2, 256), 3);
  EXPECT_EQ(bucket_last_rows(128, 256), 255);
  EXPECT_EQ(bucket_last_rows(256, 256), 511);  // calls of up to 511 rows run its tile
  EXPECT_EQ(bucket_last_rows(kMaxBatchBucket, 100), kMaxBatchBucket);
  EXPECT_EQ(bucket_last_rows(kMaxBatchBucket, 20000), 20000);
  // Every bucket's rows map back to it.
  for (const int bucket : batch_buckets(5000)) {
    EXPECT_EQ(batch_bucket(bucket_last_rows(bucket, 5000)), bucket);
  }
}

}  // namespace
}  // namespace smla
