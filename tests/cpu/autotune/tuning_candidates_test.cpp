// `smla tune`'s candidates for every DSv4 problem on every arch and in both modes: each one the
// problem can run, none twice, the heuristic default first; in batch-invariant mode only tiles
// that keep a row's bits, in batch-variant mode those and more (other segments, the other
// mma.sync path, the wgmma kernel on Hopper only, where it is the default at 128 heads).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "autotune/heuristics.h"
#include "autotune/tuning.h"
#include "codegen/decode_family.h"
#include "cpu/codegen/dsv4_problems.h"

namespace smla {
namespace {

bool has_path(const std::vector<TileConfig>& tiles, MmaPath path) {
  return std::any_of(tiles.begin(), tiles.end(),
                     [&](const TileConfig& t) { return t.mma == path; });
}

TEST(TuningCandidates, RunnableDistinctDefaultFirst) {
  for (const test::NamedProblem& named : test::dsv4_problems()) {
    SCOPED_TRACE(named.name);
    const smla_problem& p = named.problem;
    for (const ArchSpec& arch : arch_table()) {
      SCOPED_TRACE(arch.name);
      // Each mode's default: batch-variant mode's is the mma.sync tile.
      const TileConfig base = default_tile(arch, p);
      const TileConfig variant_base = mma_sync_tile(arch, p);
      const bool wgmma = arch.wgmma && p.num_heads % 64 == 0;
      const bool wgmma_default = wgmma && p.num_heads == 128;
      EXPECT_EQ(base.mma == MmaPath::kWgmma, wgmma_default);
      const std::vector<TileConfig> invariant = tuning_candidates(arch, p, false);
      const std::vector<TileConfig> variant = tuning_candidates(arch, p, true);
      ASSERT_FALSE(invariant.empty());
      EXPECT_EQ(invariant.front(), base);
      EXPECT_EQ(variant.front(), variant_base);
      // Widths, stages, occupancy (fewer fit the consumer parts' 99 KB); the wgmma kernel has
      // one shape.
      if (wgmma_default) {
        EXPECT_EQ(invariant.size(), 1u);
      } else {
        EXPECT_GT(invariant.size(), arch.smem_per_cta < 128 * 1024 ? 1u : 3u);
      }
      EXPECT_GT(variant.size(), invariant.size());
      std::set<std::string> seen;
      for (const TileConfig& t : variant) {
        EXPECT_EQ(DecodeKernel::of(arch, p, t).unsupported(), "") << t.text();
        EXPECT_TRUE(seen.insert(t.text()).second) << "twice: " << t.text();
      }
      for (const TileConfig& t : invariant) {
        EXPECT_TRUE(same_row_bits(t, base)) << t.text();
        EXPECT_LE(t.heads_per_cta, base.heads_per_cta) << t.text();
        EXPECT_TRUE(seen.count(t.text())) << "invariant candidate not in the variant list";
      }
      EXPECT_TRUE(std::any_of(variant.begin(), variant.end(),
                              [&](const TileConfig& t) { return !same_row_bits(t, base); }));
      EXPECT_TRUE(has_path(variant, MmaPath::kMmaSync));
      // The consumer parts' 99 KB hold no heads-on-M CTA.
      EXPECT_EQ(has_path(variant, MmaPath::kMmaSyncHeadsM),
                arch.family != ArchFamily::kBlackwellConsumer);
      EXPECT_EQ(has_path(variant, MmaPath::kWgmma), wgmma);
      EXPECT_EQ(has_path(invariant, MmaPath::kWgmma), wgmma_default);
    }
  }
}

// Only heads per CTA, stages and CTAs per SM may differ from the reference for equal bits.
TEST(SameRowBits, OnlyWidthStagesAndOccupancy) {
  const TileConfig base = *TileConfig::parse("hg16.w8.te32.st2.seg4.mb2.mma_sync");
  EXPECT_TRUE(same_row_bits(base, base));
  EXPECT_TRUE(same_row_bits(*TileConfig::parse("hg8.w8.te32.st4.seg4.mb1.mma_sync"), base));
  for (const char* other :
       {"hg16.w4.te32.st2.seg4.mb2.mma_sync", "hg16.w8.te64.st2.seg2.mb2.mma_sync",
        "hg16.w8.te32.st2.seg5.mb2.mma_sync", "hg16.w8.te64.st2.seg2.mb2.mma_sync_hm"}) {
    EXPECT_FALSE(same_row_bits(*TileConfig::parse(other), base)) << other;
  }
  // Wider than the default: an 8-head problem's CTAs of 8 heads sum in two chains, wider ones
  // in one (decode_kernel_scores.cuh, kScoreChains).
  const TileConfig eight = *TileConfig::parse("hg8.w8.te32.st2.seg4.mb2.mma_sync");
  EXPECT_FALSE(same_row_bits(base, eight));
  EXPECT_FALSE(same_row_bits(*TileConfig::parse("hg32.w8.te32.st2.seg4.mb1.mma_sync"), base));
}

}  // namespace
}  // namespace smla
