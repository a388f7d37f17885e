// Batch-variant mode's few-row split in the scheduler: it is first among the narrow splits and
// has its own segments (one tile each), so its calls launch rows x tiles x head groups CTAs and a
// combine CTA per (row, head) and need a workspace of their own partials; larger calls go on to
// the narrow split and the default tile as in batch-invariant mode, and the workspace covers all.
#include <gtest/gtest.h>

#include <vector>

#include "autotune/heuristics.h"
#include "cpu/codegen/dsv4_problems.h"
#include "plan/decode_scheduler.h"
#include "plan/split_tiles.h"
#include "support/arch_of.h"

namespace smla {
namespace {

TEST(DecodeSchedulerFewRow, OneTileSegmentsThenTheSplitTile) {
  const smla_problem problem = test::dsv4_compressed_problem(16, 64, 1024);  // 36 tiles
  const TileConfig tile = mma_sync_tile(test::arch_of("sm_90a"), problem);
  const DecodeKernel key = DecodeKernel::of(test::arch_of("sm_90a"), problem, tile);
  std::vector<SplitTile> narrow = narrow_splits(test::arch_of("sm_90a"), problem, tile);
  const DecodeScheduler invariant(key, narrow);
  narrow.insert(narrow.begin(), *few_row_split(test::arch_of("sm_90a"), problem));
  const DecodeScheduler variant(key, narrow);
  for (int rows = 1; rows <= 300; ++rows) {
    SCOPED_TRACE(rows);
    const DecodeLaunch launch = variant.plan(rows);
    const DecodeLaunch before = invariant.plan(rows);
    if (rows <= 3) {
      EXPECT_EQ(launch.narrow, 0);
      EXPECT_TRUE(launch.split);
      EXPECT_EQ(launch.decode_blocks, rows * 36 * 2);
      EXPECT_EQ(launch.combine_blocks, rows * 16);
      EXPECT_EQ(launch.workspace_bytes,
                static_cast<size_t>(rows) * 36 * 2 * partial_item_floats(8) * sizeof(float));
    } else {
      EXPECT_EQ(launch.narrow, before.narrow < 0 ? -1 : before.narrow + 1);
      EXPECT_EQ(launch.split, before.split);
      EXPECT_EQ(launch.decode_blocks, before.decode_blocks);
      EXPECT_EQ(launch.workspace_bytes, before.workspace_bytes);
    }
    EXPECT_GE(variant.workspace_bytes(300), launch.workspace_bytes);
  }
}

}  // namespace
}  // namespace smla
