// What a context makes of the tuning rows stored for its problem and device: a row is used when
// its text is a tile the problem can run on the context's arch and (batch-invariant mode) keeps
// a row's bits; the heuristic marker, garbage, unrunnable tiles and rows of another device or
// mode are not, and the rest keeps the buckets' order.
#include <gtest/gtest.h>

#include <memory>

#include "autotune/heuristics.h"
#include "autotune/tuning.h"
#include "cpu/codegen/dsv4_problems.h"
#include "support/arch_of.h"

namespace smla {
namespace {

const smla_problem kProblem = test::dsv4_compressed_problem(128, 64, 1024);
const ArchSpec& kHopper = test::arch_of("sm_90a");
const ArchSpec& kBlackwell = test::arch_of("sm_100a");

TEST(UsableTunedTile, WhyEachRowIsRefused) {
  const TileConfig base = mma_sync_tile(kHopper, kProblem);
  std::string why;
  EXPECT_FALSE(usable_tuned_tile(kHopper, kProblem, false, kHeuristicConfig, &why));
  EXPECT_NE(why.find("heuristic"), std::string::npos) << why;
  EXPECT_FALSE(usable_tuned_tile(kHopper, kProblem, false, "hg16.w8", &why));
  EXPECT_EQ(why, "not a tile configuration");
  const std::string wgmma = fast_tile(kHopper, kProblem)->text();
  EXPECT_FALSE(usable_tuned_tile(kBlackwell, kProblem, true, wgmma, &why));
  EXPECT_NE(why.find("wgmma does not run on sm_100a"), std::string::npos) << why;
  EXPECT_FALSE(usable_tuned_tile(kHopper, kProblem, false, wgmma, &why));
  EXPECT_NE(why.find("bits"), std::string::npos) << why;
  // The batch-invariant default on sm_90a (the wgmma kernel in segments) is usable there.
  const std::string segmented = default_tile(kHopper, kProblem).text();
  EXPECT_EQ(usable_tuned_tile(kHopper, kProblem, false, segmented, &why)->text(), segmented);
  EXPECT_EQ(usable_tuned_tile(kHopper, kProblem, true, wgmma, &why)->text(), wgmma);
  // A row of a damaged or crafted file: refused, not divided by.
  for (int segment_tiles : {0, 2147483647}) {
    TileConfig odd = *TileConfig::parse(wgmma);
    odd.segment_tiles = segment_tiles;
    EXPECT_FALSE(usable_tuned_tile(kHopper, kProblem, true, odd.text(), &why)) << odd.text();
    EXPECT_NE(why.find("segment tiles"), std::string::npos) << why;
  }

  TileConfig narrower = base;
  narrower.heads_per_cta = 16;
  narrower.stages = 3;
  EXPECT_EQ(usable_tuned_tile(kBlackwell, kProblem, false, narrower.text(), &why), narrower);

  // An 8-head problem has one width: a wider CTA sums in another order.
  const smla_problem eight = test::dsv4_compressed_problem(8, 64, 512);
  TileConfig wider = mma_sync_tile(kHopper, eight);
  ASSERT_EQ(wider.heads_per_cta, 8);
  wider.heads_per_cta = 16;
  EXPECT_FALSE(usable_tuned_tile(kHopper, eight, false, wider.text(), &why));
  EXPECT_NE(why.find("bits"), std::string::npos) << why;
  EXPECT_TRUE(usable_tuned_tile(kHopper, eight, true, wider.text(), &why));
}

void put(CubinStore& store, const TuningDevice& device, bool variant, int bucket,
         const std::string& config) {
  TuningRow row;
  row.problem_id = tuning_problem_id(kProblem, variant);
  row.batch_bucket = bucket;
  row.device_name = device.name;
  row.sm_count = device.sm_count;
  row.driver_version = device.driver_version;
  row.config_text = config;
  ASSERT_TRUE(store.put_tuning(row));
}

TEST(FindTunedTiles, OnlyUsableRowsOfThisDeviceAndMode) {
  const Logger log(SMLA_LOG_ERROR);
  const std::unique_ptr<CubinStore> store = CubinStore::open(CubinStore::Options(), log);
  const TuningDevice h200{"NVIDIA H200", 132, 13000};
  // The rows are of the mma.sync default (sm_100a's); on sm_90a the default is the wgmma kernel.
  TileConfig narrower = default_tile(kBlackwell, kProblem);
  narrower.heads_per_cta = 16;
  TileConfig deeper = default_tile(kBlackwell, kProblem);
  deeper.stages = 3;
  const std::string wgmma = fast_tile(kHopper, kProblem)->text();
  put(*store, h200, false, 64, deeper.text());
  put(*store, h200, false, 1, narrower.text());
  put(*store, h200, false, 4, kHeuristicConfig);
  put(*store, h200, false, 8, "not a tile");
  put(*store, h200, false, 16, wgmma);  // changes bits: not in invariant mode
  put(*store, h200, true, 32, wgmma);   // the other mode's row
  put(*store, {"NVIDIA H200", 114, 13000}, false, 2, narrower.text());  // another SM count
  put(*store, {"NVIDIA H100", 132, 13000}, false, 128, narrower.text());
  put(*store, {"NVIDIA H200", 132, 12080}, false, 256, narrower.text());

  const std::vector<TunedTile> invariant =
      find_tuned_tiles(*store, h200, kBlackwell, kProblem, false, log);
  ASSERT_EQ(invariant.size(), 2u);
  EXPECT_EQ(invariant[0].bucket, 1);
  EXPECT_EQ(invariant[0].tile, narrower);
  EXPECT_EQ(invariant[1].bucket, 64);
  EXPECT_EQ(invariant[1].tile, deeper);
  // On sm_90a every row would change the wgmma default's bits (another path, other segments).
  EXPECT_TRUE(find_tuned_tiles(*store, h200, kHopper, kProblem, false, log).empty());

  const std::vector<TunedTile> variant =
      find_tuned_tiles(*store, h200, kHopper, kProblem, true, log);
  ASSERT_EQ(variant.size(), 1u);
  EXPECT_EQ(variant[0].bucket, 32);
  EXPECT_EQ(variant[0].tile.text(), wgmma);
  // The same row on an arch that cannot run it.
  EXPECT_TRUE(find_tuned_tiles(*store, h200, kBlackwell, kProblem, true, log).empty());
}

}  // namespace
}  // namespace smla
