// decode_tiles is the one place that picks a problem's tile and narrow splits for smla_prepare
// and for smla bench's split or whole label: the default tile and its narrow splits, or the
// tile SMLA_TILE forces (then without narrow splits), and an unparsable SMLA_TILE is an error.
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
  ASSERT_TRUE(decode_tiles(problem, &tiles));
  EXPECT_EQ(tiles.tile.text(), default_tile_config(problem).text());
  EXPECT_EQ(texts(tiles.narrow), texts(narrow_splits(problem, tiles.tile)));
}

TEST(DecodeTiles, SmlaTileRunsEveryCall) {
  const std::string forced = "hg16.w8.te32.st3.seg5.mb1.mma_sync";
  ScopedEnv set("SMLA_TILE", forced.c_str());
  const smla_problem problem = split_problem();
  ASSERT_FALSE(narrow_splits(problem, *TileConfig::parse(forced)).empty());
  DecodeTiles tiles;
  ASSERT_TRUE(decode_tiles(problem, &tiles));
  EXPECT_EQ(tiles.tile.text(), forced);
  EXPECT_TRUE(tiles.narrow.empty());
}

TEST(DecodeTiles, UnparsableSmlaTileIsInvalidArgument) {
  ScopedEnv set("SMLA_TILE", "fast");
  const smla_problem problem = split_problem();
  DecodeTiles tiles;
  const Status status = decode_tiles(problem, &tiles);
  EXPECT_EQ(status.code(), SMLA_ERR_INVALID_ARGUMENT);
  EXPECT_NE(status.message().find("SMLA_TILE"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace smla::context_test
