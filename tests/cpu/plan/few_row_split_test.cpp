// Batch-variant mode's few-row split (few_row_split): segments of as few tiles as keep a row
// within kFewRowSegments (one tile for CSA rows) over 8-head CTAs of the entries-on-M kernel at
// every head count and layout, for calls whose grid fits two waves of CTAs; none when even one
// row does not fit, or a row has one tile.
#include <gtest/gtest.h>

#include "codegen/decode_family.h"
#include "cpu/codegen/dsv4_problems.h"
#include "plan/split_tiles.h"
#include "support/arch_of.h"

namespace smla {
namespace {

const ArchSpec& kHopper = test::arch_of("sm_90a");
constexpr int kFewRowCtas = 2 * 132;  // two waves of a 132-SM GPU

// The split's tile is the 8-head default tile with segments of `segment_tiles`; its max_rows the
// rows whose CTAs fit kFewRowCtas.
void expect_split(const smla_problem& problem, int expected_max_rows, int segment_tiles = 1) {
  SCOPED_TRACE(problem.num_heads);
  const std::optional<SplitTile> split = few_row_split(kHopper, problem);
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->max_rows, expected_max_rows);
  EXPECT_EQ(split->tile.heads_per_cta, 8);
  EXPECT_EQ(split->tile.segment_tiles, segment_tiles);
  EXPECT_EQ(split->tile.mma, MmaPath::kMmaSync);
  const DecodeKernel key = DecodeKernel::of(kHopper, problem, split->tile);
  EXPECT_EQ(key.unsupported(), "");
  const int segments = key.geometry().segments;
  EXPECT_LE(segments, kFewRowSegments);
  const int ctas_per_row = segments * ((problem.num_heads + 7) / 8);
  EXPECT_LE(expected_max_rows * ctas_per_row, kFewRowCtas);
  EXPECT_GT((expected_max_rows + 1) * ctas_per_row, kFewRowCtas);
}

TEST(FewRowSplit, OneTileSegmentsWhileTheGridFitsAWave) {
  expect_split(test::dsv4_compressed_problem(16, 64, 1024), 3);  // 36 tiles x 2 groups
  expect_split(test::dsv4_compressed_problem(8, 64, 512), 13);   // 20 tiles
  expect_split(test::dsv4_compressed_problem(64, 64, 512), 1);   // 20 tiles x 8 groups
  expect_split(test::dsv4_compressed_problem(12, 64, 512), 6);   // 2 groups, the second partial
  expect_split(test::dsv4_window_problem(16), 33);               // 4 tiles x 2 groups
  smla_problem bf16 = test::dsv4_compressed_problem(16, 64, 512);
  bf16.kv_layout = SMLA_KV_BF16;
  expect_split(bf16, 6);
  smla_problem fp8_q = test::dsv4_compressed_problem(32, 64, 1024);
  fp8_q.kv_layout = SMLA_KV_FP8_UNIFORM;
  fp8_q.q_dtype = SMLA_FP8_E4M3;
  expect_split(fp8_q, 1);  // 36 tiles x 4 groups
}

TEST(FewRowSplit, LongerSegmentsForWideRows) {
  // HCA at 1M context: 4 + 256 tiles in 38 segments of 7; 76 CTAs a row.
  expect_split(test::dsv4_compressed_problem(16, 2, 8192), 3, 7);
  expect_split(test::dsv4_compressed_problem(8, 64, 2048), 7, 2);  // 68 tiles, 34 segments
}

TEST(FewRowSplit, NoneForRowsPastAWaveOrOfOneTile) {
  EXPECT_FALSE(
      few_row_split(kHopper, test::dsv4_compressed_problem(128, 64, 1024)).has_value());  // 576
  EXPECT_FALSE(
      few_row_split(kHopper, test::dsv4_compressed_problem(128, 2, 8192)).has_value());  // 608
  smla_problem one_tile = test::dsv4_window_problem(16);
  one_tile.sources[0].width = 32;  // one tile: nothing to split
  EXPECT_FALSE(few_row_split(kHopper, one_tile).has_value());
}

TEST(FewRowSplit, FollowsTheArchsWaveAndSharedMemory) {
  // DGX Spark plans for 48 SMs: two waves of 96 CTAs hold one row of 36 tiles x 2 groups.
  const std::optional<SplitTile> spark =
      few_row_split(test::arch_of("sm_121a"), test::dsv4_compressed_problem(16, 64, 1024));
  ASSERT_TRUE(spark.has_value());
  EXPECT_EQ(spark->max_rows, 1);
  // Two 8-head CTAs do not fit the consumer parts' 100 KB of an SM: one per SM.
  EXPECT_EQ(spark->tile.min_blocks_per_sm, 1);
  EXPECT_EQ(DecodeKernel::of(test::arch_of("sm_121a"), test::dsv4_compressed_problem(16, 64, 1024),
                             spark->tile)
                .unsupported(),
            "");
}

}  // namespace
}  // namespace smla
