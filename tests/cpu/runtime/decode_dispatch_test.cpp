// DecodeDispatch: a call runs the tuned tile of its batch bucket, alone, exactly when that
// tile's plan needs no more workspace than the heuristic's asks for up to the call's rows, nor
// than the caller gives; every other call runs the heuristic schedule, and the workspace
// smla_prepare returns is the heuristic's whatever is tuned.
#include "runtime/decode_dispatch.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "autotune/heuristics.h"
#include "cpu/codegen/dsv4_problems.h"

namespace smla {
namespace {

struct Tuned {
  int bucket;
  const char* tile;
};

void check_dispatch(const smla_problem& problem, bool batch_invariant,
                    const std::vector<Tuned>& rows, int* used, int* refused) {
  DecodeTiles tiles;
  ASSERT_TRUE(decode_tiles("sm_90a", problem, batch_invariant, &tiles));
  std::vector<TunedTile> tuned;
  for (const Tuned& t : rows) tuned.push_back({t.bucket, *TileConfig::parse(t.tile)});
  const DecodeDispatch dispatch("sm_90a", problem, tiles, tuned);
  const DecodeScheduler heuristic(KernelKey::decode("sm_90a", problem, tiles.tile), tiles.narrow,
                                  tiles.fast);
  for (int n = 1; n <= 2100; ++n) {
    SCOPED_TRACE(n);
    const DecodeChoice choice = dispatch.choose(n, dispatch.workspace_bytes(n));
    int expected = -1;
    for (size_t i = 0; i < tuned.size(); ++i) {
      if (tuned[i].bucket != batch_bucket(n)) continue;
      const DecodeLaunch alone =
          DecodeScheduler(KernelKey::decode("sm_90a", problem, tuned[i].tile)).plan(n);
      if (alone.workspace_bytes <= heuristic.workspace_bytes(n)) expected = static_cast<int>(i);
      (expected >= 0 ? *used : *refused) += 1;
    }
    ASSERT_EQ(choice.tuned, expected);
    const DecodeLaunch want =
        expected >= 0
            ? DecodeScheduler(KernelKey::decode("sm_90a", problem, tuned[expected].tile)).plan(n)
            : heuristic.plan(n);
    EXPECT_EQ(choice.launch.split, want.split);
    EXPECT_EQ(choice.launch.fast, want.fast);
    EXPECT_EQ(choice.launch.narrow, want.narrow);
    EXPECT_EQ(choice.launch.decode_blocks, want.decode_blocks);
    EXPECT_EQ(choice.launch.workspace_bytes, want.workspace_bytes);
    EXPECT_LE(choice.launch.workspace_bytes, dispatch.workspace_bytes(n));
    EXPECT_EQ(dispatch.workspace_bytes(n), heuristic.workspace_bytes(n));
  }
}

TEST(DecodeDispatch, TunedTileWhereItsWorkspaceFits) {
  int used = 0, refused = 0;
  // 16 heads, 128 + 1024: one-tile segments (36 a row) over 8-head CTAs need more workspace
  // than the heuristic at a few rows, and none where they run whole rows.
  check_dispatch(test::dsv4_compressed_problem(16, 64, 1024), true,
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
  check_dispatch(
      test::dsv4_compressed_problem(128, 64, 1024), false,
      {{8, "hg64.w8.te64.st2.seg18.mb1.wgmma"}, {64, "hg32.w8.te64.st3.seg2.mb1.mma_sync_hm"}},
      &used, &refused);
  EXPECT_GT(used, 0);
}

// A call of more rows than smla_prepare's max_rows, with the workspace prepared for max_rows:
// where the heuristic's plan fits it, a tuned tile whose plan would not is passed over, so the
// call is not refused for what `smla tune` stored.
TEST(DecodeDispatch, TunedTileOnlyWhereTheCallersWorkspaceHoldsIt) {
  const smla_problem problem = test::dsv4_compressed_problem(8, 64, 512);
  DecodeTiles tiles;
  ASSERT_TRUE(decode_tiles("sm_90a", problem, /*batch_invariant=*/false, &tiles));
  const TileConfig tile = *TileConfig::parse("hg8.w8.te32.st2.seg3.mb2.mma_sync");
  const DecodeDispatch dispatch("sm_90a", problem, tiles, {{16, tile}});
  const DecodeLaunch alone = DecodeScheduler(KernelKey::decode("sm_90a", problem, tile)).plan(16);
  int passed_over = 0;
  for (int max_rows = 1; max_rows < 16; ++max_rows) {
    SCOPED_TRACE(max_rows);
    const size_t prepared = dispatch.workspace_bytes(max_rows);
    const DecodeChoice choice = dispatch.choose(16, prepared);
    EXPECT_LE(choice.launch.workspace_bytes, std::max(prepared, alone.workspace_bytes));
    if (alone.workspace_bytes > prepared) {
      EXPECT_EQ(choice.tuned, -1);
      passed_over += choice.launch.workspace_bytes <= prepared ? 1 : 0;
    } else {
      EXPECT_EQ(choice.tuned, 0);
    }
  }
  EXPECT_GT(passed_over, 0);  // calls the tuned plan would have failed and the heuristic serves
  // With the workspace prepared for the call's rows, the tuned tile runs.
  EXPECT_EQ(dispatch.choose(16, dispatch.workspace_bytes(16)).tuned, 0);
}

TEST(DecodeDispatch, NothingTunedIsTheHeuristic) {
  int used = 0, refused = 0;
  check_dispatch(test::dsv4_compressed_problem(64, 64, 512), false, {}, &used, &refused);
  EXPECT_EQ(used + refused, 0);
}

}  // namespace
}  // namespace smla
