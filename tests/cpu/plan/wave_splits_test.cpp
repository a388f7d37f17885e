// Batch-variant mode's wave splits (wave_splits): the default tile with fewer, balanced
// segments, each serving the rows between the previous split's one-wave bound (the default
// tile's first) and its own, a wave being one CTA per slot of the tile's CTAs per SM on every
// SM; none for rows of one segment or rows wider than CSA's (HCA at 1M context).
#include <gtest/gtest.h>

#include <vector>

#include "autotune/heuristics.h"
#include "codegen/decode_family.h"
#include "cpu/codegen/dsv4_problems.h"
#include "plan/split_tiles.h"
#include "support/arch_of.h"

namespace smla {
namespace {

struct ExpectedSplit {
  int segment_tiles, segments, min_rows, max_rows;
};

const ArchSpec& kHopper = test::arch_of("sm_90a");

void expect_splits(const smla_problem& problem, const std::vector<ExpectedSplit>& expected) {
  SCOPED_TRACE(problem.num_heads);
  const std::vector<SplitTile> splits = wave_splits(kHopper, problem);
  ASSERT_EQ(splits.size(), expected.size());
  const TileConfig tile = mma_sync_tile(kHopper, problem);
  const int head_groups = (problem.num_heads + tile.heads_per_cta - 1) / tile.heads_per_cta;
  for (size_t i = 0; i < splits.size(); ++i) {
    SCOPED_TRACE(i);
    TileConfig longer = tile;
    longer.segment_tiles = expected[i].segment_tiles;
    EXPECT_EQ(splits[i].tile, longer);
    const DecodeKernel key = DecodeKernel::of(kHopper, problem, splits[i].tile);
    EXPECT_EQ(key.unsupported(), "");
    EXPECT_EQ(key.geometry().segments, expected[i].segments);
    EXPECT_EQ(splits[i].min_rows, expected[i].min_rows);
    EXPECT_EQ(splits[i].max_rows, expected[i].max_rows);
    const int ctas_per_row = expected[i].segments * head_groups;
    const int wave = 132 * tile.min_blocks_per_sm;
    EXPECT_LE(splits[i].max_rows * ctas_per_row, wave);
    EXPECT_GT((splits[i].max_rows + 1) * ctas_per_row, wave);
  }
}

TEST(WaveSplits, FewerLongerSegmentsAsRowsGrow) {
  // 36 tiles, 9 default segments of 4: one wave up to 29 rows.
  expect_splits(test::dsv4_compressed_problem(16, 64, 1024),
                {{8, 5, 30, 52}, {12, 3, 53, 88}, {18, 2, 89, 132}});
  // 20 tiles, 5 default segments: one wave up to 52 rows.
  expect_splits(test::dsv4_compressed_problem(8, 64, 512), {{7, 3, 53, 88}, {10, 2, 89, 132}});
  // 12 heads: one 16-head group, as 16 heads.
  expect_splits(test::dsv4_compressed_problem(12, 64, 512), {{7, 3, 53, 88}, {10, 2, 89, 132}});
  // 32 heads: the heads-on-M kernel, one CTA per SM, 18 tiles of 64 in 9 default segments.
  expect_splits(test::dsv4_compressed_problem(32, 64, 1024),
                {{4, 5, 15, 26}, {6, 3, 27, 44}, {9, 2, 45, 66}});
  // 128 heads: 4 head groups.
  expect_splits(test::dsv4_compressed_problem(128, 64, 1024),
                {{4, 5, 4, 6}, {6, 3, 7, 11}, {9, 2, 12, 16}});
  // HCA at 128K context: 36 tiles, as CSA rows.
  expect_splits(test::dsv4_compressed_problem(16, 2, 1024),
                {{8, 5, 30, 52}, {12, 3, 53, 88}, {18, 2, 89, 132}});
}

TEST(WaveSplits, NoneForOneSegmentOrWideRows) {
  EXPECT_TRUE(wave_splits(kHopper, test::dsv4_window_problem(16)).empty());  // one segment
  // HCA at 1M context: 260 tiles in 8 default segments of 33, not of 128 entries.
  EXPECT_TRUE(wave_splits(kHopper, test::dsv4_compressed_problem(16, 2, 8192)).empty());
}

}  // namespace
}  // namespace smla
