// The kernels of a plan, in order: the mode's main tile (batch-invariant: the default tile;
// batch-variant: the mma.sync tile), then its split tiles in the order the scheduler tries
// them (batch-variant mode's few-row split, the narrow splits, batch-variant mode's wave
// splits), then batch-variant mode's whole-row fast path (the wgmma kernel on Hopper for 64-head
// multiples on an fp8 layout, else the mma.sync tile with one segment), each with the combine
// kernel of its splits; or a forced tile alone. On Hopper the default of 128 heads is the wgmma
// kernel in segments.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "autotune/heuristics.h"
#include "cpu/codegen/dsv4_problems.h"
#include "cpu/plan/plan_of.h"
#include "plan/split_tiles.h"

namespace smla {
namespace {

// "role:tile" of each kernel.
std::vector<std::string> kernel_texts(const DecodePlan& plan) {
  std::vector<std::string> texts;
  for (const PlannedKernel& k : plan.kernels()) {
    texts.push_back(std::string(kernel_role_name(k.role)) + ":" + k.decode.tile.text());
    EXPECT_EQ(k.combine.has_value(), k.decode.geometry().segments > 1) << texts.back();
    if (k.combine) {
      EXPECT_EQ(k.combine->text(), k.decode.combine().text());
    }
  }
  return texts;
}

std::vector<std::string> split_texts(const char* role, const std::vector<SplitTile>& splits) {
  std::vector<std::string> texts;
  for (const SplitTile& split : splits)
    texts.push_back(std::string(role) + ":" + split.tile.text());
  return texts;
}

const smla_problem kFlashTp4 = test::dsv4_compressed_problem(16, 64, 512);

TEST(DecodePlanKernels, BatchInvariantTheDefaultAndItsNarrowSplits) {
  const ArchSpec& arch = test::arch_of("sm_90a");
  std::vector<std::string> expected = {"default:" + default_tile(arch, kFlashTp4).text()};
  for (const std::string& text :
       split_texts("narrow", narrow_splits(arch, kFlashTp4, default_tile(arch, kFlashTp4)))) {
    expected.push_back(text);
  }
  ASSERT_EQ(expected.size(), 2u);
  EXPECT_EQ(kernel_texts(*test::plan_of("sm_90a", kFlashTp4, false)), expected);
}

TEST(DecodePlanKernels, BatchVariantFewRowFirstWaveSplitsLastThenTheFastPath) {
  const ArchSpec& arch = test::arch_of("sm_100a");
  const TileConfig tile = mma_sync_tile(arch, kFlashTp4);
  std::vector<std::string> expected = {"default:" + tile.text(),
                                       "few-row:" + few_row_split(arch, kFlashTp4)->tile.text()};
  for (const std::string& text : split_texts("narrow", narrow_splits(arch, kFlashTp4, tile))) {
    expected.push_back(text);
  }
  const std::vector<SplitTile> waves = wave_splits(arch, kFlashTp4);
  ASSERT_FALSE(waves.empty());
  for (const std::string& text : split_texts("wave", waves)) expected.push_back(text);
  expected.push_back("fast:" + fast_tile(arch, kFlashTp4)->text());
  EXPECT_EQ(kernel_texts(*test::plan_of("sm_100a", kFlashTp4, true)), expected);
}

// On Hopper 128 heads on the fp8 layouts run the wgmma kernel in segments by default (folded in
// whole-row calls, so without narrow splits, which would need another kernel's bits); other
// archs, and batch-variant mode below its fast path (the wgmma kernel over whole rows), the
// heads-on-M kernel with its narrow splits.
TEST(DecodePlanKernels, TheWgmmaKernelInSegmentsOnHopper) {
  const smla_problem pro = test::dsv4_compressed_problem(128, 64, 1024);  // 18 tiles of 64
  const std::unique_ptr<DecodePlan> invariant = test::plan_of("sm_90a", pro, false);
  EXPECT_EQ(kernel_texts(*invariant),
            std::vector<std::string>{"default:hg64.w8.te64.st2.seg3.mb1.wgmma"});
  // A row of one segment is named by its length (the whole-row tile's text).
  EXPECT_EQ(default_tile(test::arch_of("sm_90a"), test::dsv4_window_problem(128)).text(),
            "hg64.w8.te64.st2.seg2.mb1.wgmma");
  // The GPU tests' folded rows: 40 of 128 + 1024 entries, 32 of 128 + 512 do not split.
  EXPECT_EQ(DecodeScheduler(invariant->kernels()[0].decode).max_split_rows(), 21);
  const smla_problem flash = test::dsv4_compressed_problem(128, 64, 512);
  EXPECT_EQ(
      DecodeScheduler(test::plan_of("sm_90a", flash, false)->kernels()[0].decode).max_split_rows(),
      31);
  const std::unique_ptr<DecodePlan> variant = test::plan_of("sm_90a", pro, true);
  EXPECT_EQ(variant->kernels().front().decode.tile.mma, MmaPath::kMmaSyncHeadsM);
  EXPECT_EQ(variant->kernels().back().role, KernelRole::kFast);
  EXPECT_EQ(variant->kernels().back().decode.tile.text(), "hg64.w8.te64.st2.seg18.mb1.wgmma");
  EXPECT_FALSE(variant->kernels().back().combine.has_value());
  const smla_problem hca = test::dsv4_compressed_problem(128, 2, 8192);  // 130 tiles: ~8 segments
  EXPECT_EQ(test::plan_of("sm_90a", hca, false)->kernels()[0].decode.tile.text(),
            "hg64.w8.te64.st2.seg17.mb1.wgmma");
  for (const char* arch : {"sm_100a", "sm_103a"}) {
    const std::unique_ptr<DecodePlan> plan = test::plan_of(arch, pro, false);
    EXPECT_EQ(plan->kernels()[0].decode.tile.mma, MmaPath::kMmaSyncHeadsM) << arch;
    EXPECT_GT(plan->kernels().size(), 1u) << arch;
  }
  // 64 heads (one CTA a row) keep the heads-on-M kernel's narrow splits in the default mode.
  EXPECT_EQ(test::plan_of("sm_90a", test::dsv4_compressed_problem(64, 64, 512), false)
                ->kernels()[0]
                .decode.tile.mma,
            MmaPath::kMmaSyncHeadsM);
}

TEST(DecodePlanKernels, TheFastPathOfOtherProblemsIsOneSegmentOfTheMmaSyncTile) {
  smla_problem uneven = test::dsv4_compressed_problem(64, 2, 300);  // 2 + 5 tiles of 64
  uneven.sources[0].width = 100;
  EXPECT_EQ(fast_tile(test::arch_of("sm_90a"), uneven)->segment_tiles, 7);
  const auto expect_one_segment = [&](const char* arch, const smla_problem& problem) {
    SCOPED_TRACE(std::string(arch) + " " + std::to_string(problem.num_heads));
    const std::unique_ptr<DecodePlan> plan = test::plan_of(arch, problem, true);
    const PlannedKernel& fast = plan->kernels().back();
    ASSERT_EQ(fast.role, KernelRole::kFast);
    EXPECT_NE(fast.decode.tile.mma, MmaPath::kWgmma);
    EXPECT_EQ(fast.decode.geometry().segments, 1);
    TileConfig tile = mma_sync_tile(test::arch_of(arch), problem);
    tile.segment_tiles = fast.decode.tile.segment_tiles;
    EXPECT_EQ(fast.decode.tile.text(), tile.text());
  };
  const smla_problem pro = test::dsv4_compressed_problem(128, 64, 1024);
  for (const char* arch : {"sm_100a", "sm_103a", "sm_120a"}) expect_one_segment(arch, pro);
  for (int heads : {16, 96}) {
    expect_one_segment("sm_90a", test::dsv4_compressed_problem(heads, 64, 1024));
  }
  smla_problem bf16 = pro;
  bf16.kv_layout = SMLA_KV_BF16;
  expect_one_segment("sm_90a", bf16);
  // None in batch-invariant mode.
  const std::unique_ptr<DecodePlan> invariant = test::plan_of("sm_90a", pro, false);
  for (const PlannedKernel& k : invariant->kernels()) EXPECT_NE(k.role, KernelRole::kFast);
}

TEST(DecodePlanKernels, AForcedTileRunsEveryCall) {
  PlanSettings settings;
  settings.forced_tile = *TileConfig::parse("hg16.w8.te32.st3.seg5.mb1.mma_sync");
  ASSERT_FALSE(narrow_splits(test::arch_of("sm_90a"), kFlashTp4, *settings.forced_tile).empty());
  for (const bool batch_variant : {false, true}) {
    settings.batch_variant = batch_variant;
    std::unique_ptr<DecodePlan> plan;
    ASSERT_TRUE(DecodePlan::build(test::arch_of("sm_90a"), kFlashTp4, settings,
                                  {{1, mma_sync_tile(test::arch_of("sm_90a"), kFlashTp4)}}, &plan));
    EXPECT_EQ(kernel_texts(*plan),
              std::vector<std::string>{"forced:hg16.w8.te32.st3.seg5.mb1.mma_sync"});
    for (int rows : {1, 7, 64, 1000}) EXPECT_EQ(plan->call(rows, SIZE_MAX).kernel, 0);
  }
}

TEST(DecodePlanKernels, AForcedTileTheProblemCannotRunIsInvalidArgument) {
  PlanSettings settings;
  settings.forced_tile = *TileConfig::parse("hg64.w8.te64.st2.seg3.mb1.wgmma");
  std::unique_ptr<DecodePlan> plan;
  const Status status = DecodePlan::build(test::arch_of("sm_100a"), kFlashTp4, settings, {}, &plan);
  EXPECT_EQ(status.code(), SMLA_ERR_INVALID_ARGUMENT);
  EXPECT_NE(status.message().find("SMLA_TILE: tile hg64.w8.te64.st2.seg3.mb1.wgmma: wgmma does "
                                  "not run on sm_100a"),
            std::string::npos)
      << status.message();
}

// Every kernel a plan of either mode loads is in prewarm_kernels, and nothing else is.
TEST(DecodePlanKernels, PrewarmIsTheUnionOfBothModesPlans) {
  for (const ArchSpec& arch : arch_table()) {
    for (const test::NamedProblem& named : test::dsv4_problems()) {
      SCOPED_TRACE(std::string(arch.name) + " " + named.name);
      std::vector<std::string> want;
      for (const bool batch_variant : {false, true}) {
        const std::unique_ptr<DecodePlan> plan =
            test::plan_of(arch.name, named.problem, batch_variant);
        for (const PlannedKernel& k : plan->kernels()) {
          for (const std::string& text :
               {k.decode.text(), k.combine ? k.combine->text() : std::string()}) {
            if (!text.empty() && std::find(want.begin(), want.end(), text) == want.end()) {
              want.push_back(text);
            }
          }
        }
      }
      std::vector<std::string> got;
      for (const KernelKey& key : prewarm_kernels(arch, named.problem)) got.push_back(key.text());
      EXPECT_EQ(got, want);
    }
  }
}

}  // namespace
}  // namespace smla
