// TileConfig text is canonical: parse(text()) gives back the same configuration, field by field,
// for every value the candidates and the heuristic use. `SMLA_TILE`, tuning rows and key texts
// all carry it.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "codegen/tile_config.h"

namespace smla {
namespace {

void check_round_trip(const TileConfig& config, const std::string& expected_text) {
  SCOPED_TRACE(expected_text);
  EXPECT_EQ(config.text(), expected_text);
  const std::optional<TileConfig> parsed = TileConfig::parse(expected_text);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->heads_per_cta, config.heads_per_cta);
  EXPECT_EQ(parsed->warps, config.warps);
  EXPECT_EQ(parsed->tile_entries, config.tile_entries);
  EXPECT_EQ(parsed->stages, config.stages);
  EXPECT_EQ(parsed->segment_tiles, config.segment_tiles);
  EXPECT_EQ(parsed->min_blocks_per_sm, config.min_blocks_per_sm);
  EXPECT_EQ(parsed->mma, config.mma);
  EXPECT_TRUE(*parsed == config);
}

TEST(TileConfigRoundTrip, ParseInvertsText) {
  check_round_trip(TileConfig{}, "hg16.w16.te64.st3.seg2.mb1.mma_sync");
  for (int heads_per_cta : {8, 16, 32}) {
    for (int warps : {4, 8, 16}) {
      for (int tile_entries : {32, 64}) {
        for (int stages : {2, 3, 6}) {
          for (int segment_tiles : {1, 4, 17, 256}) {
            for (int min_blocks : {1, 2}) {
              TileConfig config;
              config.heads_per_cta = heads_per_cta;
              config.warps = warps;
              config.tile_entries = tile_entries;
              config.stages = stages;
              config.segment_tiles = segment_tiles;
              config.min_blocks_per_sm = min_blocks;
              check_round_trip(config,
                               "hg" + std::to_string(heads_per_cta) + ".w" + std::to_string(warps) +
                                   ".te" + std::to_string(tile_entries) + ".st" +
                                   std::to_string(stages) + ".seg" + std::to_string(segment_tiles) +
                                   ".mb" + std::to_string(min_blocks) + ".mma_sync");
            }
          }
        }
      }
    }
  }
}

TEST(TileConfigRoundTrip, HeadsOnMPath) {
  TileConfig config;
  config.heads_per_cta = 32;
  config.warps = 8;
  config.stages = 2;
  config.mma = MmaPath::kMmaSyncHeadsM;
  check_round_trip(config, "hg32.w8.te64.st2.seg2.mb1.mma_sync_hm");
  config.mma = MmaPath::kMmaSync;
  EXPECT_FALSE(*TileConfig::parse("hg32.w8.te64.st2.seg2.mb1.mma_sync_hm") == config);
}

TEST(TileConfigRoundTrip, WgmmaPath) {
  TileConfig config;
  config.heads_per_cta = 64;
  config.warps = 8;
  config.stages = 2;
  config.segment_tiles = 256;
  config.mma = MmaPath::kWgmma;
  check_round_trip(config, "hg64.w8.te64.st2.seg256.mb1.wgmma");
  EXPECT_FALSE(TileConfig::parse("hg64.w8.te64.st2.seg256.mb1.wgmma2").has_value());
}

TEST(TileConfigRoundTrip, EqualityIsFieldEquality) {
  TileConfig a, b;
  EXPECT_TRUE(a == b);
  b.segment_tiles = 5;
  EXPECT_FALSE(a == b);
  b = a;
  b.min_blocks_per_sm = 2;
  EXPECT_FALSE(a == b);
}

}  // namespace
}  // namespace smla
