// A plan's tuning rows: a call runs the tuned tile of its batch bucket, alone, exactly when that
// tile's launch needs no more workspace than the heuristic's largest for up to the call's rows,
// nor than the caller gives; every other call runs the heuristic schedule, and the workspace
// smla_prepare returns is the heuristic's whatever is tuned.
#include <gtest/gtest.h>

#include <algorithm>

#include "cpu/codegen/dsv4_problems.h"
#include "cpu/plan/plan_of.h"

namespace smla {
namespace {

struct Tuned {
  int bucket;
  const char* tile;
};

std::unique_ptr<DecodePlan> tuned_plan(const smla_problem& problem, bool batch_variant,
                                       const std::vector<TunedTile>& tuned) {
  PlanSettings settings;
  settings.batch_variant = batch_variant;
  std::unique_ptr<DecodePlan> plan;
  EXPECT_TRUE(DecodePlan::build(test::arch_of("sm_90a"), problem, settings, tuned, &plan));
  return plan;
}

void check_plan(const smla_problem& problem, bool batch_variant, const std::vector<Tuned>& rows,
                int* used, int* refused) {
  std::vector<TunedTile> tuned;
  for (const Tuned& t : rows) tuned.push_back({t.bucket, *TileConfig::parse(t.tile)});
  const std::unique_ptr<DecodePlan> plan = tuned_plan(problem, batch_variant, tuned);
  const std::unique_ptr<DecodePlan> heuristic = test::plan_of("sm_90a", problem, batch_variant);
  ASSERT_EQ(plan->kernels().size(), heuristic->kernels().size() + tuned.size());
  for (size_t i = 0; i < tuned.size(); ++i) {
    const PlannedKernel& kernel = plan->kernels()[heuristic->kernels().size() + i];
    EXPECT_EQ(kernel.role, KernelRole::kTuned);
    EXPECT_EQ(kernel.tuned_bucket, tuned[i].bucket);
    EXPECT_EQ(kernel.decode.tile, tuned[i].tile);
  }
  for (int n = 1; n <= 2100; ++n) {
    SCOPED_TRACE(n);
    const PlannedCall call = plan->call(n, plan->workspace_bytes(n));
    int expected = -1;
    for (size_t i = 0; i < tuned.size(); ++i) {
      if (tuned[i].bucket != batch_bucket(n)) continue;
      const DecodeLaunch alone =
          DecodeScheduler(DecodeKernel::of(test::arch_of("sm_90a"), problem, tuned[i].tile))
              .plan(n);
      if (alone.workspace_bytes <= heuristic->workspace_bytes(n)) expected = static_cast<int>(i);
      (expected >= 0 ? *used : *refused) += 1;
    }
    const PlannedCall want =
        expected >= 0
            ? PlannedCall{static_cast<int>(heuristic->kernels().size()) + expected,
                          DecodeScheduler(
                              plan->kernels()[heuristic->kernels().size() + expected].decode)
                              .plan(n)}
            : heuristic->call(n, heuristic->workspace_bytes(n));
    ASSERT_EQ(call.kernel, want.kernel);
    EXPECT_EQ(call.launch.split, want.launch.split);
    EXPECT_EQ(call.launch.fast, want.launch.fast);
    EXPECT_EQ(call.launch.narrow, want.launch.narrow);
    EXPECT_EQ(call.launch.decode_blocks, want.launch.decode_blocks);
    EXPECT_EQ(call.launch.workspace_bytes, want.launch.workspace_bytes);
    EXPECT_LE(call.launch.workspace_bytes, plan->workspace_bytes(n));
    EXPECT_EQ(plan->workspace_bytes(n), heuristic->workspace_bytes(n));
  }
}

TEST(DecodePlanTuned, TunedTileWhereItsWorkspaceFits) {
  int used = 0, refused = 0;
  // 16 heads, 128 + 1024: one-tile segments (36 a row) over 8-head CTAs need more workspace
  // than the heuristic at a few rows, and none where they run whole rows.
  check_plan(test::dsv4_compressed_problem(16, 64, 1024), false,
             {{1, "hg8.w8.te32.st3.seg4.mb2.mma_sync"},
              {16, "hg8.w8.te32.st2.seg1.mb2.mma_sync"},
              {256, "hg8.w8.te32.st2.seg1.mb2.mma_sync"},
              {2048, "hg16.w8.te32.st4.seg4.mb1.mma_sync"}},
             &used, &refused);
  EXPECT_GT(used, 0);
  EXPECT_GT(refused, 0);
  // 128 heads in batch-variant mode: the wgmma tile for some buckets, the heuristic's own
  // fast path and splits around them.
  used = refused = 0;
  check_plan(
      test::dsv4_compressed_problem(128, 64, 1024), true,
      {{8, "hg64.w8.te64.st2.seg18.mb1.wgmma"}, {64, "hg32.w8.te64.st3.seg2.mb1.mma_sync_hm"}},
      &used, &refused);
  EXPECT_GT(used, 0);
}

// A call of more rows than smla_prepare's max_rows, with the workspace prepared for max_rows:
// where the heuristic's plan fits it, a tuned tile whose launch would not is passed over, so the
// call is not refused for what `smla tune` stored.
TEST(DecodePlanTuned, TunedTileOnlyWhereTheCallersWorkspaceHoldsIt) {
  const smla_problem problem = test::dsv4_compressed_problem(8, 64, 512);
  const TileConfig tile = *TileConfig::parse("hg8.w8.te32.st2.seg3.mb2.mma_sync");
  const std::unique_ptr<DecodePlan> plan = tuned_plan(problem, true, {{16, tile}});
  const int tuned_kernel = static_cast<int>(plan->kernels().size()) - 1;
  const DecodeLaunch alone =
      DecodeScheduler(DecodeKernel::of(test::arch_of("sm_90a"), problem, tile)).plan(16);
  int passed_over = 0;
  for (int max_rows = 1; max_rows < 16; ++max_rows) {
    SCOPED_TRACE(max_rows);
    const size_t prepared = plan->workspace_bytes(max_rows);
    const PlannedCall call = plan->call(16, prepared);
    EXPECT_LE(call.launch.workspace_bytes, std::max(prepared, alone.workspace_bytes));
    if (alone.workspace_bytes > prepared) {
      EXPECT_NE(call.kernel, tuned_kernel);
      passed_over += call.launch.workspace_bytes <= prepared ? 1 : 0;
    } else {
      EXPECT_EQ(call.kernel, tuned_kernel);
    }
  }
  EXPECT_GT(passed_over, 0);  // calls the tuned launch would have failed and the heuristic serves
  // With the workspace prepared for the call's rows, the tuned tile runs.
  EXPECT_EQ(plan->call(16, plan->workspace_bytes(16)).kernel, tuned_kernel);
}

TEST(DecodePlanTuned, NothingTunedIsTheHeuristic) {
  int used = 0, refused = 0;
  check_plan(test::dsv4_compressed_problem(64, 64, 512), true, {}, &used, &refused);
  EXPECT_EQ(used + refused, 0);
}

}  // namespace
}  // namespace smla
