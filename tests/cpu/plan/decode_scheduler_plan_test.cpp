// DecodeScheduler::plan: a call splits iff the kernel has more than one segment,
// rows * head_groups <= kSplitCtaLimit, the split grid's waves stay within
// tiles / (segment tiles + kSplitOverheadTiles) and the partials fit kWorkspaceLimit (into its
// segments, or prefix items for kernels of one CTA per SM); past that it runs prefix items or
// whole rows; the grids and the workspace follow from that choice and the kernel's shape alone.
#include <gtest/gtest.h>

#include "cpu/plan/decode_scheduler_keys.h"
#include "plan/decode_scheduler.h"
#include "support/arch_of.h"

namespace smla::scheduler_test {
namespace {

void check_plans(const DecodeKernel& key) {
  SCOPED_TRACE(key.text());
  const DecodeScheduler scheduler(key);
  const int64_t heads = key.heads;
  const int64_t head_groups = (heads + key.tile.heads_per_cta - 1) / key.tile.heads_per_cta;
  const int64_t segments = key.geometry().segments;
  const int64_t item_floats = key.tile.heads_per_cta * (SMLA_HEAD_DIM + 2);
  const int64_t tiles = key.geometry().tiles;
  const int64_t waves =
      tiles / ((tiles + segments - 1) / segments + DecodeScheduler::kSplitOverheadTiles);
  const int64_t wave_ctas = 132 * key.tile.min_blocks_per_sm;
  EXPECT_EQ(scheduler.head_groups(), head_groups);
  EXPECT_EQ(scheduler.geometry().segments, segments);
  for (int rows : {1, 2, 3, 5, 6, 7, 12, 16, 24, 47, 48, 49, 95, 96, 97, 100, 1024, 1 << 24}) {
    SCOPED_TRACE(rows);
    const DecodeLaunch plan = scheduler.plan(rows);
    const bool split =
        segments > 1 && rows * head_groups <= DecodeScheduler::kSplitCtaLimit &&
        rows * segments * head_groups <= waves * wave_ctas &&
        rows * segments * head_groups * item_floats * 4 <= DecodeScheduler::kWorkspaceLimit;
    // Kernels of two CTAs per SM split into their segments (decode_scheduler_prefix_test.cpp).
    if (split && key.tile.min_blocks_per_sm > 1) {
      EXPECT_EQ(plan.prefix_segments, 1);
    }
    // Past the split, prefix items (decode_scheduler_prefix_test.cpp) or whole rows.
    EXPECT_EQ(plan.split, split || plan.prefix_segments > 1);
    if (plan.split) {
      EXPECT_GE(plan.prefix_segments, 1);
      EXPECT_LT(plan.prefix_segments, segments);
      const int64_t items = rows * (segments - plan.prefix_segments + 1) * head_groups;
      EXPECT_EQ(plan.decode_blocks, items);
      // Prefix calls' grid has a row per item of a row (work_item).
      EXPECT_EQ(plan.decode_grid_y, plan.prefix_segments > 1 ? items / (rows * head_groups) : 1);
      EXPECT_EQ(plan.combine_blocks, rows * heads);
      EXPECT_EQ(plan.workspace_bytes, static_cast<size_t>(items * item_floats * 4));
      EXPECT_LE(plan.workspace_bytes, static_cast<size_t>(DecodeScheduler::kWorkspaceLimit));
      // The (max, sum) pairs follow the partial outputs of every item.
      EXPECT_EQ(plan.partial_ml_offset,
                static_cast<size_t>(items * key.tile.heads_per_cta * SMLA_HEAD_DIM * 4));
    } else {
      EXPECT_EQ(plan.prefix_segments, 1);
      EXPECT_EQ(plan.decode_blocks, rows * head_groups);
      EXPECT_EQ(plan.decode_grid_y, 1);
      EXPECT_EQ(plan.combine_blocks, 0);
      EXPECT_EQ(plan.workspace_bytes, 0u);
    }
  }
}

TEST(DecodeSchedulerPlan, SplitsSmallCallsOfMultiSegmentKernels) {
  for (const DecodeKernel& key : scheduler_keys()) check_plans(key);
}

TEST(DecodeSchedulerPlan, SplitLimitExamples) {
  // DSv4-Pro TP 1 CSA in 32-head groups and 32-entry tiles: 4 groups, 4 + 32 tiles in 9
  // segments of 4; a row's partials take 9 * 4 * 32 * 514 * 4 bytes, so 14 rows are the last
  // call that splits within 32 MiB (the CTA limit would allow 24).
  TileConfig tile;
  tile.heads_per_cta = 32;
  tile.tile_entries = 32;
  tile.segment_tiles = 4;
  const DecodeScheduler scheduler(DecodeKernel::of(
      test::arch_of("sm_90a"), test::dsv4_compressed_problem(128, 64, 1024), tile));
  ASSERT_EQ(scheduler.head_groups(), 4);
  ASSERT_EQ(scheduler.geometry().segments, 9);
  EXPECT_EQ(scheduler.max_split_rows(), 14);
  // 14 rows: 504 one-segment items in 4 waves of 132 cost 4 * (4 + 2 + 3.57) = 38.3 tiles,
  // 34.5 with the gain; prefix items (decode_scheduler_prefix_test.cpp) of P segments cost
  // max(4P + 2 + 3.57, 56 * (4P + 5.57 + (9 - P) * 9.57) / 132): P = 5 the least, 27.1 (4:
  // 29.5, 6: 29.6).
  EXPECT_TRUE(scheduler.splits(14));
  EXPECT_EQ(scheduler.plan(14).prefix_segments, 5);
  EXPECT_EQ(scheduler.plan(14).decode_blocks, 14 * 5 * 4);
  EXPECT_EQ(scheduler.plan(14).combine_blocks, 14 * 128);
  // 15 rows, 60 whole-row CTAs of 36 tiles on 132 slots, cost 0.9 * 36 = 32.4 tiles; prefix
  // items (decode_scheduler_prefix_test.cpp; a partial is 3.57 tiles of entries) of 5
  // segments cost max(20 + 2 + 3.57, 60 * (25.57 + 4 * 9.57) / 132 = 29.0), the least (4:
  // 31.5; 6: 29.6): 5 items a row.
  EXPECT_EQ(scheduler.plan(15).prefix_segments, 5);
  EXPECT_EQ(scheduler.plan(15).decode_blocks, 15 * 5 * 4);
}

TEST(DecodeSchedulerPlan, WaveBoundOfTheHeadsOnMKernel) {
  // The default tiles (the heads-on-M kernel, one CTA per SM, 2-tile segments): a split call's
  // waves of 132 CTAs stay within tiles / (2 + 2). DSv4-Flash TP 1 CSA (64 heads, 128 + 512:
  // 10 tiles, 5 segments, 2 head groups): 2 waves, 26 rows. DSv4-Pro TP 1 (128 heads,
  // 128 + 1024: 18 tiles, 9 segments, 4 groups): 4 waves, 14 rows. Pro TP 4 (32 heads): 4 waves
  // would allow 58 rows; the 32 MiB of partials allow 56.
  struct Case {
    int heads, width, rows;
  };
  for (const Case c : {Case{64, 512, 26}, Case{128, 1024, 14}, Case{32, 1024, 56}}) {
    const smla_problem problem = test::dsv4_compressed_problem(c.heads, 64, c.width);
    const DecodeScheduler scheduler(DecodeKernel::of(
        test::arch_of("sm_90a"), problem, mma_sync_tile(test::arch_of("sm_90a"), problem)));
    SCOPED_TRACE(c.heads);
    EXPECT_EQ(scheduler.max_split_rows(), c.rows);
    EXPECT_TRUE(scheduler.splits(c.rows));
    // Past it: prefix items or whole rows.
    const DecodeLaunch past = scheduler.plan(c.rows + 1);
    EXPECT_EQ(past.split, past.prefix_segments > 1);
  }
  // 16 heads (the entries-on-M kernel, two CTAs per SM): kSplitCtaLimit binds, as before.
  const smla_problem problem = test::dsv4_compressed_problem(16, 64, 1024);
  const DecodeScheduler scheduler(DecodeKernel::of(
      test::arch_of("sm_90a"), problem, mma_sync_tile(test::arch_of("sm_90a"), problem)));
  EXPECT_EQ(scheduler.max_split_rows(), 96);
}

}  // namespace
}  // namespace smla::scheduler_test
