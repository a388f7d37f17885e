// The narrow split (autotune/heuristics.h): few-row calls of a 16-head kernel split over 8-head
// CTAs of the same tile; more rows plan as before; the workspace covers every call; problems
// without a 16-head tile, or with one segment, have none.
#include <gtest/gtest.h>

#include <algorithm>

#include "autotune/heuristics.h"
#include "cpu/codegen/dsv4_problems.h"
#include "runtime/decode_scheduler.h"

namespace smla {
namespace {

TEST(DecodeSchedulerNarrow, FewRowsSplitOverEightHeadCtas) {
  const smla_problem problem = test::dsv4_compressed_problem(16, 64, 1024);
  const TileConfig tile = default_tile_config(problem);
  const std::optional<NarrowSplit> narrow = narrow_split(problem, tile);
  ASSERT_TRUE(narrow.has_value());
  TileConfig expected = tile;
  expected.heads_per_cta = 8;
  EXPECT_EQ(narrow->tile.text(), expected.text());
  const KernelKey key = KernelKey::decode("sm_90a", problem, tile);
  const KernelKey narrow_key = KernelKey::decode("sm_90a", problem, narrow->tile);
  const DecodeScheduler plain(key);
  const DecodeScheduler scheduler(key, &narrow_key, narrow->max_rows);
  const int64_t segments = key.geometry().segments;
  ASSERT_GT(segments, 1);
  size_t largest = 0;
  for (int rows = 1; rows <= 300; ++rows) {
    SCOPED_TRACE(rows);
    const DecodeLaunch launch = scheduler.plan(rows);
    EXPECT_EQ(launch.narrow, rows <= narrow->max_rows);
    if (launch.narrow) {
      const int64_t items = rows * segments * 2;
      EXPECT_TRUE(launch.split);
      EXPECT_EQ(launch.decode_blocks, items);
      EXPECT_EQ(launch.combine_blocks, rows * 16);
      EXPECT_EQ(launch.partial_ml_offset, static_cast<size_t>(items * 8 * SMLA_HEAD_DIM * 4));
      EXPECT_EQ(launch.workspace_bytes, static_cast<size_t>(items * 8 * (SMLA_HEAD_DIM + 2) * 4));
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

TEST(DecodeSchedulerNarrow, OnlySixteenHeadTilesWithSegments) {
  for (int heads : {1, 8, 32, 64, 128}) {
    const smla_problem problem = test::dsv4_compressed_problem(heads, 64, 1024);
    EXPECT_FALSE(narrow_split(problem, default_tile_config(problem)).has_value()) << heads;
  }
  const smla_problem window = test::dsv4_window_problem(16);  // one segment: nothing to split
  EXPECT_FALSE(narrow_split(window, default_tile_config(window)).has_value());
  // The narrow kernel is among the kernels a prepare loads (and `smla cache build` prewarms).
  const smla_problem problem = test::dsv4_compressed_problem(16, 64, 1024);
  const std::vector<KernelKey> keys = default_problem_kernels("sm_90a", problem);
  ASSERT_EQ(keys.size(), 4u);  // two decode kernels, two combine kernels
  EXPECT_EQ(keys[1].tile.heads_per_cta, 8);
  EXPECT_EQ(keys[3].family, KernelFamily::kCombine);
  EXPECT_EQ(keys[3].tile.heads_per_cta, 8);
}

}  // namespace
}  // namespace smla
