// Prefix items (DecodeScheduler::kPrefixGain): a call whose whole rows leave part of a wave
// idle, past the split, or (kernels of one CTA per SM) whose split's last wave is short, cuts
// each row into its first P segments, folded in one CTA, and one item per later segment, when
// the estimate says that is faster; never where whole rows fill every slot of their waves, and
// never past the workspace limit (decode_scheduler_plan_test.cpp checks each plan's grid and
// workspace).
#include <gtest/gtest.h>

#include "autotune/heuristics.h"
#include "cpu/codegen/dsv4_problems.h"
#include "cpu/plan/decode_scheduler_keys.h"
#include "plan/decode_scheduler.h"
#include "plan/split_tiles.h"
#include "support/arch_of.h"

namespace smla::scheduler_test {
namespace {

DecodeScheduler default_scheduler(const char* arch, const smla_problem& problem) {
  return DecodeScheduler(
      DecodeKernel::of(test::arch_of(arch), problem, default_tile(test::arch_of(arch), problem)));
}

TEST(DecodeSchedulerPrefix, EntriesOnMKernel) {
  // DSv4-Pro TP 8 CSA: 16 heads, 36 tiles of 32 entries in 9 segments of 4, two CTAs per SM
  // (264 slots); a partial (16 * 514 floats) is 1.78 tiles of entries (32 * 576 bytes). At 100
  // rows the whole rows run alone on their SMs: 0.72 * 36 = 25.9 tiles, 23.3 with the gain.
  // Prefix items of 4 segments: max(16 + 2 + 1.78, 100 * (19.78 + 5 * 7.78) / 264 = 22.2); of
  // 3: 100 * (15.78 + 6 * 7.78) / 264 = 23.7; of 5: 23.8.
  const DecodeScheduler scheduler =
      default_scheduler("sm_90a", test::dsv4_compressed_problem(16, 64, 1024));
  EXPECT_EQ(scheduler.max_split_rows(), 96);
  const DecodeLaunch plan = scheduler.plan(100);
  EXPECT_TRUE(plan.split);
  EXPECT_EQ(plan.prefix_segments, 4);
  EXPECT_EQ(plan.decode_blocks, 100 * 6);
  EXPECT_EQ(plan.combine_blocks, 100 * 16);
  // 128 rows: 4 segments cost 128 * 58.7 / 264 = 28.5, 5 cost 23.8: whole rows.
  EXPECT_FALSE(scheduler.plan(128).split);
  // 256 rows fill 256 of the 264 slots: whole rows.
  EXPECT_FALSE(scheduler.plan(256).split);
  EXPECT_EQ(scheduler.plan(256).prefix_segments, 1);
}

TEST(DecodeSchedulerPrefix, WgmmaKernelWithinTheWorkspace) {
  // DSv4-Pro TP 1 CSA on sm_90a: the wgmma kernel, 128 heads in 2 groups, 18 tiles in 6
  // segments of 3, one CTA per SM; a partial (64 * 514 floats) is 3.57 tiles of entries. 24
  // rows: whole rows 0.9 * 18 = 16.2 tiles; prefix items of 3 segments: max(9 + 2 + 3.57,
  // 48 * (14.57 + 3 * 8.57) / 132 = 14.6); of 2: 48 * (11.57 + 4 * 8.57) / 132 = 16.7.
  const DecodeScheduler scheduler =
      default_scheduler("sm_90a", test::dsv4_compressed_problem(128, 64, 1024));
  EXPECT_EQ(scheduler.max_split_rows(), 21);
  EXPECT_EQ(scheduler.plan(24).prefix_segments, 3);
  EXPECT_EQ(scheduler.plan(24).decode_blocks, 24 * 4 * 2);
  // 32 rows: 3 segments would need 4 items a row, 32 * 4 * 2 * 64 * 514 * 4 bytes, past
  // 32 MiB; 4 segments cost 12 + 2 + 3.57, past 16.2.
  EXPECT_FALSE(scheduler.plan(32).split);
  EXPECT_LE(scheduler.workspace_bytes(1024), static_cast<size_t>(DecodeScheduler::kWorkspaceLimit));
}

TEST(DecodeSchedulerPrefix, SplitCallsOfOneCtaPerSm) {
  // DSv4-Pro TP 2 CSA: the heads-on-M kernel, 64 heads in 2 groups, 18 tiles of 64 entries in 9
  // segments of 2, one CTA per SM; a partial (32 * 514 floats) is 1.78 tiles of entries. 7 rows
  // split into 126 items, one wave: 2 + 2 + 1.78 = 5.78 tiles, which no prefix item beats.
  const DecodeScheduler scheduler =
      default_scheduler("sm_90a", test::dsv4_compressed_problem(64, 64, 1024));
  ASSERT_EQ(scheduler.max_split_rows(), 28);
  EXPECT_EQ(scheduler.plan(7).prefix_segments, 1);
  EXPECT_EQ(scheduler.plan(7).decode_blocks, 7 * 9 * 2);
  // 8 rows: 144 items take two waves, 11.6 tiles (10.4 with the gain); prefix items of 2
  // segments max(4 + 2 + 1.78, 16 * (7.78 + 7 * 5.78) / 132 = 5.8) = 7.8; of 3: 9.8.
  EXPECT_EQ(scheduler.plan(8).prefix_segments, 2);
  EXPECT_EQ(scheduler.plan(8).decode_blocks, 8 * 8 * 2);
}

TEST(DecodeSchedulerPrefix, SplitCallsOfTwoCtasPerSmSplitIntoSegments) {
  // The entries-on-M kernels keep their splits: there the estimate chose prefix items that
  // measured 0.95-1.14x (docs/PERFORMANCE.md, "Prefix items in split calls").
  for (int heads : {8, 16}) {
    const DecodeScheduler scheduler =
        default_scheduler("sm_90a", test::dsv4_compressed_problem(heads, 64, 1024));
    ASSERT_EQ(scheduler.max_split_rows(), 96);
    for (int rows = 1; rows <= 96; ++rows) {
      EXPECT_EQ(scheduler.plan(rows).prefix_segments, 1) << heads << " heads, " << rows << " rows";
    }
  }
}

TEST(DecodeSchedulerPrefix, NeverWhereWholeRowsFillTheirWaves) {
  for (const DecodeKernel& key : scheduler_keys()) {
    SCOPED_TRACE(key.text());
    const DecodeScheduler scheduler(key);
    const int64_t wave = wave_ctas(*key.arch, key.tile);
    for (int64_t waves = 1; waves <= 3; ++waves) {
      if (waves * wave % scheduler.head_groups() != 0) continue;
      const int rows = static_cast<int>(waves * wave / scheduler.head_groups());
      if (rows <= scheduler.max_split_rows()) continue;
      EXPECT_EQ(scheduler.plan(rows).prefix_segments, 1) << rows << " rows";
      EXPECT_FALSE(scheduler.plan(rows).split) << rows << " rows";
    }
  }
}

TEST(DecodeSchedulerPrefix, OnlyKernelsOfThreeSegmentsOrMore) {
  // Two segments leave no P between a split (P = 1) and whole rows (P = 2).
  int checked = 0;
  for (const DecodeKernel& key : scheduler_keys()) {
    const DecodeScheduler scheduler(key);
    if (scheduler.geometry().segments > 2) continue;
    ++checked;
    for (int rows = 1; rows <= 1100; ++rows) {
      ASSERT_EQ(scheduler.plan(rows).prefix_segments, 1) << key.text() << ", " << rows << " rows";
    }
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace smla::scheduler_test
