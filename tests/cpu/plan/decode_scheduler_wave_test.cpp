// Batch-variant mode's wave splits in the scheduler: after the few-row and narrow splits, the
// default tile's own split while its grid fits one wave, then each wave split over its row
// range (the last past the default's split bound), then whole rows; their workspace is covered.
#include <gtest/gtest.h>

#include <cstdint>

#include "cpu/codegen/dsv4_problems.h"
#include "cpu/plan/plan_of.h"

namespace smla {
namespace {

TEST(DecodeSchedulerWave, EachRowCountRunsTheMostSegmentsThatFitAWave) {
  const smla_problem problem = test::dsv4_compressed_problem(16, 64, 1024);  // 36 tiles
  const std::unique_ptr<DecodePlan> plan = test::plan_of("sm_100a", problem, true);
  // The few-row split, the 8-head narrow split, then three wave splits.
  ASSERT_EQ(test::split_kernels(*plan), 5);
  for (int rows = 1; rows <= 300; ++rows) {
    SCOPED_TRACE(rows);
    const DecodeLaunch launch = test::launch_of(*plan, rows);
    const int expected_narrow = rows <= 3     ? 0
                                : rows <= 7   ? 1
                                : rows <= 29  ? -1
                                : rows <= 52  ? 2
                                : rows <= 88  ? 3
                                : rows <= 132 ? 4
                                              : -1;
    EXPECT_EQ(launch.narrow, expected_narrow);
    // The last wave split reaches past the default's split bound (96 rows); then whole rows.
    EXPECT_EQ(launch.split, rows <= 132);
    EXPECT_EQ(launch.fast, rows > 132);
    const int segments = expected_narrow == 2   ? 5
                         : expected_narrow == 3 ? 3
                         : expected_narrow == 4 ? 2
                                                : 0;
    if (segments > 0) {
      EXPECT_EQ(launch.decode_blocks, rows * segments);
      EXPECT_LE(launch.decode_blocks, 2 * 132);  // two CTAs per SM
      EXPECT_EQ(launch.workspace_bytes,
                static_cast<size_t>(rows) * segments * partial_item_floats(16) * sizeof(float));
    }
    if (expected_narrow == -1 && rows <= 29) {
      EXPECT_EQ(launch.decode_blocks, rows * 9);
    }
    EXPECT_GE(plan->workspace_bytes(300), launch.workspace_bytes);
  }
}

// On sm_90a the wgmma kernel follows the last wave split where that comes before its own
// switch (DecodeScheduler::kBatchVariantCtas): 64 heads from 34 rows instead of 64, 128 heads from
// 17 instead of 32; HCA rows at 1M context have no wave splits and keep the switch.
TEST(DecodeSchedulerWave, TheWgmmaKernelFollowsTheWaveSplits) {
  const auto first_fast_rows = [](const smla_problem& problem) {
    const std::unique_ptr<DecodePlan> plan = test::plan_of("sm_90a", problem, true);
    int rows = 1;
    while (rows < 1000 && !test::launch_of(*plan, rows).fast) ++rows;
    for (int more = rows; more < rows + 300; ++more) EXPECT_TRUE(test::launch_of(*plan, more).fast);
    return rows;
  };
  EXPECT_EQ(first_fast_rows(test::dsv4_compressed_problem(64, 64, 512)), 34);
  EXPECT_EQ(first_fast_rows(test::dsv4_compressed_problem(128, 64, 1024)), 17);
  EXPECT_EQ(first_fast_rows(test::dsv4_compressed_problem(128, 2, 8192)), 32);
}

TEST(DecodeSchedulerWave, BatchInvariantModeHasNone) {
  const smla_problem problem = test::dsv4_compressed_problem(16, 64, 1024);
  // The 8-head narrow split only.
  EXPECT_EQ(test::split_kernels(*test::plan_of("sm_100a", problem, false)), 1);
}

}  // namespace
}  // namespace smla
