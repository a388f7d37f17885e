// Batch-variant mode's wave splits (wave_splits): the default tile with fewer, balanced
// segments, each serving the rows between the previous split's one-wave bound (the default
// tile's first) and its own; none for default tiles of one CTA per SM, rows of one segment or
// rows wider than CSA's (HCA at 1M context).
#include <gtest/gtest.h>

#include <vector>

#include "autotune/heuristics.h"
#include "codegen/kernel_key.h"
#include "cpu/codegen/dsv4_problems.h"

namespace smla {
namespace {

struct ExpectedSplit {
  int segment_tiles, segments, min_rows, max_rows;
};

void expect_splits(const smla_problem& problem, const std::vector<ExpectedSplit>& expected) {
  SCOPED_TRACE(problem.num_heads);
  const std::vector<NarrowSplit> splits = wave_splits(problem);
  ASSERT_EQ(splits.size(), expected.size());
  const TileConfig tile = default_tile_config(problem);
  const int head_groups = (problem.num_heads + tile.heads_per_cta - 1) / tile.heads_per_cta;
  for (size_t i = 0; i < splits.size(); ++i) {
    SCOPED_TRACE(i);
    TileConfig longer = tile;
    longer.segment_tiles = expected[i].segment_tiles;
    EXPECT_EQ(splits[i].tile, longer);
    const KernelKey key = KernelKey::decode("sm_90a", problem, splits[i].tile);
    EXPECT_EQ(key.unsupported_tile(), "");
    EXPECT_EQ(key.geometry().segments, expected[i].segments);
    EXPECT_EQ(splits[i].min_rows, expected[i].min_rows);
    EXPECT_EQ(splits[i].max_rows, expected[i].max_rows);
    const int ctas_per_row = expected[i].segments * head_groups;
    EXPECT_LE(splits[i].max_rows * ctas_per_row, kOneWaveCtas);
    EXPECT_GT((splits[i].max_rows + 1) * ctas_per_row, kOneWaveCtas);
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
  // HCA at 128K context: 36 tiles, as CSA rows.
  expect_splits(test::dsv4_compressed_problem(16, 2, 1024),
                {{8, 5, 30, 52}, {12, 3, 53, 88}, {18, 2, 89, 132}});
}

TEST(WaveSplits, NoneForOneCtaPerSmOneSegmentOrWideRows) {
  // The heads-on-M kernel above 16 heads: one CTA per SM.
  EXPECT_TRUE(wave_splits(test::dsv4_compressed_problem(32, 64, 1024)).empty());
  EXPECT_TRUE(wave_splits(test::dsv4_window_problem(16)).empty());  // 4 tiles, one segment
  // HCA at 1M context: 260 tiles in 8 default segments of 33, not of 128 entries.
  EXPECT_TRUE(wave_splits(test::dsv4_compressed_problem(16, 2, 8192)).empty());
}

}  // namespace
}  // namespace smla
