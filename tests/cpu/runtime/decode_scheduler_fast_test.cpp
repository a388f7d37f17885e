// The batch-variant fast path (autotune/heuristics.h, batch_variant_tile): calls whose grid of
// whole-row 64-head CTAs fills kBatchVariantCtas run it, every other call plans as without it
// (split, narrow or whole), and it needs no workspace; the kernels smla_prepare loads and
// `smla cache build` prewarms include it for sm_90a only.
#include <gtest/gtest.h>

#include <vector>

#include "autotune/heuristics.h"
#include "cpu/codegen/dsv4_problems.h"
#include "runtime/decode_scheduler.h"

namespace smla {
namespace {

void check_plans(const smla_problem& problem, int first_fast_rows) {
  SCOPED_TRACE(problem.num_heads);
  const TileConfig tile = default_tile_config(problem);
  const std::vector<NarrowSplit> narrow = narrow_splits(problem, tile);
  const KernelKey key = KernelKey::decode("sm_90a", problem, tile);
  const DecodeScheduler plain(key, narrow);
  const DecodeScheduler scheduler(key, narrow, 64);
  const int64_t head_groups = problem.num_heads / 64;
  for (int rows = 1; rows <= 300; ++rows) {
    SCOPED_TRACE(rows);
    const DecodeLaunch launch = scheduler.plan(rows);
    const DecodeLaunch before = plain.plan(rows);
    ASSERT_EQ(launch.fast, rows >= first_fast_rows);
    EXPECT_FALSE(before.fast);
    if (launch.fast) {
      EXPECT_FALSE(launch.split);
      EXPECT_EQ(launch.narrow, -1);
      EXPECT_EQ(launch.decode_blocks, rows * head_groups);
      EXPECT_GE(launch.decode_blocks, kBatchVariantCtas);
      EXPECT_EQ(launch.combine_blocks, 0);
      EXPECT_EQ(launch.workspace_bytes, 0u);
    } else {
      EXPECT_EQ(launch.split, before.split);
      EXPECT_EQ(launch.narrow, before.narrow);
      EXPECT_EQ(launch.decode_blocks, before.decode_blocks);
      EXPECT_EQ(launch.workspace_bytes, before.workspace_bytes);
    }
  }
  EXPECT_EQ(scheduler.workspace_bytes(300), plain.workspace_bytes(300));
}

TEST(DecodeSchedulerFast, ManyRowsRunTheFastPath) {
  check_plans(test::dsv4_compressed_problem(128, 64, 1024), 32);  // 2 CTAs a row
  check_plans(test::dsv4_compressed_problem(64, 64, 512), 64);    // 1 CTA a row
}

TEST(DecodeSchedulerFast, PreparedAndPrewarmedOnSm90aOnly) {
  const smla_problem problem = test::dsv4_compressed_problem(128, 64, 1024);
  const std::vector<KernelKey> hopper = default_problem_kernels("sm_90a", problem);
  const std::vector<KernelKey> blackwell = default_problem_kernels("sm_100a", problem);
  ASSERT_EQ(hopper.size(), blackwell.size() + 1);
  int wgmma = 0;
  for (const KernelKey& key : hopper) {
    if (key.tile.mma != MmaPath::kWgmma) continue;
    ++wgmma;
    EXPECT_EQ(key.tile.text(), batch_variant_tile("sm_90a", problem)->text());
    EXPECT_EQ(key.geometry().segments, 1);  // no combine kernel
  }
  EXPECT_EQ(wgmma, 1);
  for (const KernelKey& key : blackwell) EXPECT_NE(key.tile.mma, MmaPath::kWgmma);
}

}  // namespace
}  // namespace smla
