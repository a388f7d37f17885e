// decode_tiles is the one place that picks a problem's tile, narrow splits and batch-variant fast
// path for smla_prepare and for smla bench's label: the default tile and its narrow splits, in
// batch-variant mode the few-row split before them, the wave splits after them and a whole-row
// fast path (the wgmma kernel for sm_90a and 64-head multiples on an fp8 layout, else the
// default tile with one segment), or the tile SMLA_TILE forces (then alone), and an unparsable
// SMLA_TILE is an error. On sm_90a the default of 128 heads is the wgmma kernel.
#include <string>

#include "context_fixture.h"
#include "runtime/decode_scheduler.h"

namespace smla::context_test {
namespace {

std::string texts(const std::vector<NarrowSplit>& narrow) {
  std::string all;
  for (const NarrowSplit& split : narrow)
    all += split.tile.text() + "/" + std::to_string(split.max_rows) + " ";
  return all;
}

TEST(DecodeTiles, WithoutSmlaTileTheDefaultAndItsNarrowSplits) {
  ScopedEnv unset("SMLA_TILE", nullptr);
  const smla_problem problem = split_problem();
  DecodeTiles tiles;
  ASSERT_TRUE(decode_tiles("sm_90a", problem, true, &tiles));
  EXPECT_EQ(tiles.tile.text(), default_tile_config("", problem).text());
  EXPECT_EQ(texts(tiles.narrow), texts(narrow_splits(problem, tiles.tile)));
  EXPECT_FALSE(tiles.fast.has_value());
}

// On sm_90a 128 heads on the fp8 layouts run the wgmma kernel in segments by default (folded in
// whole-row calls, so without narrow splits, which would need another kernel's bits); other
// archs, and batch-variant mode below its fast path (the wgmma kernel over whole rows), the
// heads-on-M kernel with its narrow splits.
TEST(DecodeTiles, TheWgmmaKernelInSegmentsOnSm90a) {
  ScopedEnv unset("SMLA_TILE", nullptr);
  DecodeTiles tiles;
  const smla_problem pro = test::dsv4_compressed_problem(128, 64, 1024);  // 18 tiles of 64
  ASSERT_TRUE(decode_tiles("sm_90a", pro, true, &tiles));
  EXPECT_EQ(tiles.tile.text(), "hg64.w8.te64.st2.seg3.mb1.wgmma");
  EXPECT_TRUE(tiles.narrow.empty());
  EXPECT_FALSE(tiles.fast.has_value());
  // A row of one segment is named by its length (the whole-row tile's text).
  EXPECT_EQ(default_tile_config("sm_90a", test::dsv4_window_problem(128)).text(),
            "hg64.w8.te64.st2.seg2.mb1.wgmma");
  // The GPU tests' folded rows: 40 of 128 + 1024 entries, 32 of 128 + 512 do not split.
  EXPECT_EQ(DecodeScheduler(KernelKey::decode("sm_90a", pro, tiles.tile)).max_split_rows(), 21);
  const smla_problem flash = test::dsv4_compressed_problem(128, 64, 512);
  ASSERT_TRUE(decode_tiles("sm_90a", flash, true, &tiles));
  EXPECT_EQ(DecodeScheduler(KernelKey::decode("sm_90a", flash, tiles.tile)).max_split_rows(), 31);
  ASSERT_TRUE(decode_tiles("sm_90a", pro, false, &tiles));
  EXPECT_EQ(tiles.tile.mma, MmaPath::kMmaSyncHeadsM);
  EXPECT_FALSE(tiles.narrow.empty());
  ASSERT_TRUE(tiles.fast.has_value());
  EXPECT_EQ(tiles.fast->text(), "hg64.w8.te64.st2.seg18.mb1.wgmma");
  const smla_problem hca = test::dsv4_compressed_problem(128, 2, 8192);  // 130 tiles: ~8 segments
  ASSERT_TRUE(decode_tiles("sm_90a", hca, true, &tiles));
  EXPECT_EQ(tiles.tile.text(), "hg64.w8.te64.st2.seg17.mb1.wgmma");
  for (const char* arch : {"sm_100a", "sm_103a"}) {
    ASSERT_TRUE(decode_tiles(arch, pro, true, &tiles));
    EXPECT_EQ(tiles.tile.mma, MmaPath::kMmaSyncHeadsM) << arch;
    EXPECT_FALSE(tiles.narrow.empty()) << arch;
  }
  // 64 heads (one CTA a row) keep the heads-on-M kernel's narrow splits in the default mode.
  ASSERT_TRUE(decode_tiles("sm_90a", test::dsv4_compressed_problem(64, 64, 512), true, &tiles));
  EXPECT_EQ(tiles.tile.mma, MmaPath::kMmaSyncHeadsM);
}

TEST(DecodeTiles, BatchVariantModeAddsAWholeRowKernel) {
  ScopedEnv unset("SMLA_TILE", nullptr);
  const smla_problem pro = test::dsv4_compressed_problem(128, 64, 1024);  // 128 + 1024 entries
  DecodeTiles tiles;
  ASSERT_TRUE(decode_tiles("sm_90a", pro, false, &tiles));
  ASSERT_TRUE(tiles.fast.has_value());
  EXPECT_EQ(tiles.fast->text(), "hg64.w8.te64.st2.seg18.mb1.wgmma");  // 2 + 16 tiles: whole rows
  EXPECT_EQ(tiles.tile.text(), default_tile_config("", pro).text());
  EXPECT_EQ(KernelKey::decode("sm_90a", pro, *tiles.fast).unsupported_tile(), "");
  smla_problem uneven = test::dsv4_compressed_problem(64, 2, 300);  // 2 + 5 tiles of 64
  uneven.sources[0].width = 100;
  ASSERT_TRUE(decode_tiles("sm_90a", uneven, false, &tiles));
  ASSERT_TRUE(tiles.fast.has_value());
  EXPECT_EQ(tiles.fast->segment_tiles, 7);
  // Not in batch-invariant mode; on Blackwell, for 16 or 96 heads and on bf16 caches the
  // default tile with one segment a row instead.
  ASSERT_TRUE(decode_tiles("sm_90a", pro, true, &tiles));
  EXPECT_FALSE(tiles.fast.has_value());
  const auto expect_one_segment = [&](const std::string& arch, const smla_problem& problem) {
    SCOPED_TRACE(arch + " " + std::to_string(problem.num_heads));
    ASSERT_TRUE(decode_tiles(arch, problem, false, &tiles));
    ASSERT_TRUE(tiles.fast.has_value());
    EXPECT_NE(tiles.fast->mma, MmaPath::kWgmma);
    EXPECT_EQ(KernelKey::decode(arch, problem, *tiles.fast).geometry().segments, 1);
    TileConfig tile = default_tile_config("", problem);
    tile.segment_tiles = tiles.fast->segment_tiles;
    EXPECT_EQ(tiles.fast->text(), tile.text());
  };
  for (const char* arch : {"sm_100a", "sm_103a"}) expect_one_segment(arch, pro);
  for (int heads : {16, 96}) {
    expect_one_segment("sm_90a", test::dsv4_compressed_problem(heads, 64, 1024));
  }
  smla_problem bf16 = pro;
  bf16.kv_layout = SMLA_KV_BF16;
  expect_one_segment("sm_90a", bf16);
}

TEST(DecodeTiles, BatchVariantModePutsTheFewRowSplitFirstAndTheWaveSplitsLast) {
  ScopedEnv unset("SMLA_TILE", nullptr);
  const smla_problem problem = split_problem();
  DecodeTiles invariant, variant;
  ASSERT_TRUE(decode_tiles("sm_100a", problem, true, &invariant));
  ASSERT_TRUE(decode_tiles("sm_100a", problem, false, &variant));
  const std::vector<NarrowSplit> waves = wave_splits(problem);
  ASSERT_FALSE(waves.empty());
  ASSERT_EQ(variant.narrow.size(), invariant.narrow.size() + 1 + waves.size());
  EXPECT_EQ(texts({variant.narrow[0]}), texts({*few_row_split(problem)}));
  const auto middle = variant.narrow.begin() + 1 + invariant.narrow.size();
  EXPECT_EQ(texts({variant.narrow.begin() + 1, middle}), texts(invariant.narrow));
  EXPECT_EQ(texts({middle, variant.narrow.end()}), texts(waves));
  EXPECT_EQ(variant.tile.text(), invariant.tile.text());
}

TEST(DecodeTiles, SmlaTileRunsEveryCall) {
  const std::string forced = "hg16.w8.te32.st3.seg5.mb1.mma_sync";
  ScopedEnv set("SMLA_TILE", forced.c_str());
  const smla_problem problem = split_problem();
  ASSERT_FALSE(narrow_splits(problem, *TileConfig::parse(forced)).empty());
  DecodeTiles tiles;
  ASSERT_TRUE(decode_tiles("sm_90a", problem, true, &tiles));
  EXPECT_EQ(tiles.tile.text(), forced);
  EXPECT_TRUE(tiles.narrow.empty());
  const smla_problem pro = test::dsv4_compressed_problem(128, 64, 1024);
  ASSERT_TRUE(decode_tiles("sm_90a", pro, false, &tiles));
  EXPECT_EQ(tiles.tile.text(), forced);
  EXPECT_FALSE(tiles.fast.has_value());
}

TEST(DecodeTiles, UnparsableSmlaTileIsInvalidArgument) {
  ScopedEnv set("SMLA_TILE", "fast");
  const smla_problem problem = split_problem();
  DecodeTiles tiles;
  const Status status = decode_tiles("sm_90a", problem, true, &tiles);
  EXPECT_EQ(status.code(), SMLA_ERR_INVALID_ARGUMENT);
  EXPECT_NE(status.message().find("SMLA_TILE"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace smla::context_test
