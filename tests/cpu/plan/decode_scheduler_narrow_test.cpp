// The narrow splits (autotune/heuristics.h): few-row calls split over CTAs with fewer heads of
// the same tile while the grid fits 128, the narrowest first; other calls plan as
// without them; the workspace covers every call; single-segment kernels have none.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "autotune/heuristics.h"
#include "cpu/codegen/dsv4_problems.h"
#include "plan/decode_plan.h"
#include "plan/decode_scheduler.h"
#include "plan/split_tiles.h"
#include "support/arch_of.h"

namespace smla {
namespace {

void check_plans(const smla_problem& problem) {
  SCOPED_TRACE(problem.num_heads);
  const TileConfig tile = mma_sync_tile(test::arch_of("sm_90a"), problem);
  const std::vector<SplitTile> narrow = narrow_splits(test::arch_of("sm_90a"), problem, tile);
  ASSERT_FALSE(narrow.empty());
  const DecodeKernel key = DecodeKernel::of(test::arch_of("sm_90a"), problem, tile);
  const DecodeScheduler plain(key);
  const DecodeScheduler scheduler(key, narrow);
  const int64_t segments = key.geometry().segments;
  size_t largest = 0;
  for (int rows = 1; rows <= 300; ++rows) {
    SCOPED_TRACE(rows);
    const DecodeLaunch launch = scheduler.plan(rows);
    int expected = -1;
    for (size_t i = 0; i < narrow.size() && expected < 0; ++i) {
      if (rows <= narrow[i].max_rows) expected = static_cast<int>(i);
    }
    ASSERT_EQ(launch.narrow, expected);
    if (expected >= 0) {
      const int64_t heads_per_cta = narrow[expected].tile.heads_per_cta;
      const int64_t groups = (problem.num_heads + heads_per_cta - 1) / heads_per_cta;
      const int64_t items = rows * segments * groups;
      EXPECT_TRUE(launch.split);
      EXPECT_EQ(launch.decode_blocks, items);
      EXPECT_LE(launch.decode_blocks, 128);
      EXPECT_EQ(launch.combine_blocks, rows * problem.num_heads);
      EXPECT_EQ(launch.partial_ml_offset,
                static_cast<size_t>(items * heads_per_cta * SMLA_HEAD_DIM * 4));
      EXPECT_EQ(launch.workspace_bytes,
                static_cast<size_t>(items * heads_per_cta * (SMLA_HEAD_DIM + 2) * 4));
    } else {
      const DecodeLaunch before = plain.plan(rows);
      EXPECT_EQ(launch.split, before.split);
      EXPECT_EQ(launch.decode_blocks, before.decode_blocks);
      EXPECT_EQ(launch.workspace_bytes, before.workspace_bytes);
    }
    EXPECT_EQ(scheduler.splits(rows), launch.split);
    largest = std::max(largest, launch.workspace_bytes);
    ASSERT_EQ(scheduler.workspace_bytes(rows), largest);
  }
}

TEST(DecodeSchedulerNarrow, FewRowsSplitOverNarrowerCtas) {
  for (int heads : {12, 16, 20, 32, 64, 100, 128}) {
    check_plans(test::dsv4_compressed_problem(heads, 64, 1024));
  }
  check_plans(test::dsv4_compressed_problem(16, 2, 8192));  // HCA at 1M context
}

TEST(DecodeSchedulerNarrow, SplitsOfTheDsv4Shapes) {
  // (heads per CTA, max rows) of each narrow split of the CSA problem at `heads`.
  using Splits = std::vector<std::pair<int, int>>;
  const auto splits = [](int heads) {
    const smla_problem problem = test::dsv4_compressed_problem(heads, 64, 1024);
    Splits result;
    for (const SplitTile& split : narrow_splits(test::arch_of("sm_90a"), problem,
                                                mma_sync_tile(test::arch_of("sm_90a"), problem))) {
      result.emplace_back(split.tile.heads_per_cta, split.max_rows);
    }
    return result;
  };
  // 16 heads: 9 segments of 4 32-entry tiles; 8 heads per CTA, 18 CTAs a row.
  EXPECT_EQ(splits(16), (Splits{{8, 7}}));
  // 32 heads: 9 segments of 2 64-entry tiles; the heads-on-M kernel's 16 heads (18 CTAs a row;
  // it has no 8-head CTAs).
  EXPECT_EQ(splits(32), (Splits{{16, 7}}));
  // 128 heads: 8 heads per CTA would take 144 CTAs for one row.
  EXPECT_EQ(splits(128), (Splits{{16, 1}}));
  const smla_problem h32_problem = test::dsv4_compressed_problem(32, 64, 1024);
  const std::vector<SplitTile> h32 = narrow_splits(
      test::arch_of("sm_90a"), h32_problem, mma_sync_tile(test::arch_of("sm_90a"), h32_problem));
  for (const SplitTile& split : h32) {
    TileConfig tile = mma_sync_tile(test::arch_of("sm_90a"), h32_problem);
    tile.heads_per_cta = split.tile.heads_per_cta;
    EXPECT_EQ(split.tile.text(), tile.text());  // only the heads per CTA differ
  }
  EXPECT_TRUE(splits(8).empty());                             // no fewer heads per CTA than 8
  const smla_problem window = test::dsv4_window_problem(16);  // one segment: nothing to split
  EXPECT_TRUE(
      narrow_splits(test::arch_of("sm_90a"), window, mma_sync_tile(test::arch_of("sm_90a"), window))
          .empty());
  // The narrow kernels are among those a prepare loads (and `smla cache build` prewarms):
  // the default and the narrow split (batch-invariant mode); the default, batch-variant mode's
  // few-row split, the narrow split, its three wave splits and its one-segment fast path; the
  // combine kernel of each that splits.
  const std::vector<KernelKey> keys = prewarm_kernels(test::arch_of("sm_90a"), h32_problem);
  const std::vector<SplitTile> waves = wave_splits(test::arch_of("sm_90a"), h32_problem);
  ASSERT_EQ(waves.size(), 3u);
  std::vector<std::string> decode_tiles, combine_texts;
  for (const KernelKey& key : keys) {
    if (key.decode()) {
      decode_tiles.push_back(key.decode()->tile.text());
    } else {
      combine_texts.push_back(key.text());
    }
  }
  const TileConfig base = default_tile(test::arch_of("sm_90a"), h32_problem);
  TileConfig narrow16 = base;
  narrow16.heads_per_cta = 16;
  std::vector<std::string> expected = {
      base.text(), narrow16.text(),
      few_row_split(test::arch_of("sm_90a"), h32_problem)->tile.text()};
  for (const SplitTile& wave : waves) expected.push_back(wave.tile.text());
  expected.push_back(fast_tile(test::arch_of("sm_90a"), h32_problem)->text());
  EXPECT_EQ(decode_tiles, expected);
  EXPECT_EQ(combine_texts.size(), 6u);              // all but the fast path split
  EXPECT_EQ(keys[1].combine()->heads_per_cta, 32);  // the default's, right after it
  EXPECT_EQ(keys[3].combine()->heads_per_cta, 16);  // the narrow split's
}

}  // namespace
}  // namespace smla
