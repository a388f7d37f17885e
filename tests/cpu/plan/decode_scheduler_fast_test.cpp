// The batch-variant fast path (autotune/heuristics.h, batch_variant_tile): calls whose grid of
// whole-row 64-head CTAs fills DecodeScheduler::kBatchVariantCtas run the wgmma kernel (sm_90a),
// or, elsewhere, calls that the default tile runs whole (or in prefix items) run its one-segment
// copy; every other call plans as without it (split, narrow or whole), and it needs no workspace;
// the kernels smla_prepare loads and `smla cache build` prewarm include it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "autotune/heuristics.h"
#include "cpu/codegen/dsv4_problems.h"
#include "plan/decode_plan.h"
#include "plan/decode_scheduler.h"
#include "plan/split_tiles.h"
#include "support/arch_of.h"

namespace smla {
namespace {

void check_plans(const std::string& arch, const smla_problem& problem, int first_fast_rows) {
  SCOPED_TRACE(arch + " " + std::to_string(problem.num_heads));
  const TileConfig tile = mma_sync_tile(test::arch_of("sm_90a"), problem);  // batch-variant mode's
  const std::vector<SplitTile> narrow = narrow_splits(test::arch_of("sm_90a"), problem, tile);
  const DecodeKernel key = DecodeKernel::of(test::arch_of(arch.c_str()), problem, tile);
  const std::optional<TileConfig> fast = fast_tile(test::arch_of(arch.c_str()), problem);
  ASSERT_TRUE(fast.has_value());
  const DecodeScheduler plain(key, narrow);
  const DecodeScheduler scheduler(key, narrow, fast);
  const int64_t head_groups = (problem.num_heads + fast->heads_per_cta - 1) / fast->heads_per_cta;
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
      if (fast->mma == MmaPath::kWgmma) {
        EXPECT_GE(launch.decode_blocks, DecodeScheduler::kBatchVariantCtas);
      } else {
        // Where the default runs whole rows or prefix items.
        EXPECT_TRUE(!before.split || before.prefix_segments > 1);
      }
      EXPECT_EQ(launch.combine_blocks, 0);
      EXPECT_EQ(launch.workspace_bytes, 0u);
    } else {
      EXPECT_EQ(launch.split, before.split);
      EXPECT_EQ(launch.narrow, before.narrow);
      EXPECT_EQ(launch.decode_blocks, before.decode_blocks);
      EXPECT_EQ(launch.workspace_bytes, before.workspace_bytes);
    }
  }
  // The fast path takes every call from first_fast_rows, so the workspace is what fewer rows
  // need, without the prefix items the default would run past its splits.
  EXPECT_EQ(scheduler.workspace_bytes(300), plain.workspace_bytes(first_fast_rows - 1));
}

TEST(DecodeSchedulerFast, ManyRowsRunTheFastPath) {
  // The wgmma kernel: 2 and 1 CTAs a row.
  check_plans("sm_90a", test::dsv4_compressed_problem(128, 64, 1024), 32);
  check_plans("sm_90a", test::dsv4_compressed_problem(64, 64, 512), 64);
  // One segment a row, from the first row count the default tile no longer splits into
  // segments (it runs prefix items or whole rows there): rows x head groups past 96, or (128
  // heads) partials past the 32 MiB workspace from 15 rows.
  check_plans("sm_100a", test::dsv4_compressed_problem(128, 64, 1024), 15);
  check_plans("sm_90a", test::dsv4_compressed_problem(16, 64, 1024), 97);
  check_plans("sm_90a", test::dsv4_compressed_problem(8, 64, 512), 97);
}

TEST(DecodeSchedulerFast, PreparedAndPrewarmedOnEveryArch) {
  const smla_problem problem = test::dsv4_compressed_problem(128, 64, 1024);
  // sm_90a: the wgmma kernel; sm_100a: the default tile with one segment. Neither has a combine
  // kernel.
  for (const std::string arch : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(arch);
    const std::optional<TileConfig> fast = fast_tile(test::arch_of(arch.c_str()), problem);
    ASSERT_TRUE(fast.has_value());
    EXPECT_EQ(fast->mma == MmaPath::kWgmma, arch == "sm_90a");
    int found = 0;
    for (const KernelKey& key : prewarm_kernels(test::arch_of(arch.c_str()), problem)) {
      if (!key.decode() || key.decode()->tile.text() != fast->text()) continue;
      ++found;
      EXPECT_EQ(key.decode()->geometry().segments, 1);
    }
    EXPECT_EQ(found, 1);
  }
  TileConfig one_segment = mma_sync_tile(test::arch_of("sm_90a"), problem);
  one_segment.segment_tiles = 18;  // 2 + 16 tiles of 64
  EXPECT_EQ(fast_tile(test::arch_of("sm_100a"), problem)->text(), one_segment.text());
  // Rows the default already cuts into long segments (HCA) have none off sm_90a.
  EXPECT_FALSE(fast_tile(test::arch_of("sm_100a"), test::dsv4_compressed_problem(16, 2, 8192)));
}

}  // namespace
}  // namespace smla
