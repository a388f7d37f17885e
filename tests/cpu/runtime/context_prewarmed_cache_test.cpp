// A cache file prewarmed by a context that may compile serves a context that may not: the
// JIT-forbidden context prepares from the file alone (it could not compile), gets the same
// workspace, and adds nothing to the cache; a problem the file lacks stays NOT_READY, and so
// does one whose narrow-split kernels the file lacks, or (in batch-variant mode) whose few-row
// split or fast path kernel it lacks.
#include <set>
#include <string>

#include "context_fixture.h"
#include "plan/decode_plan.h"
#include "plan/split_tiles.h"

namespace smla::context_test {
namespace {

using ContextPrewarmedCache = NoGpuContextTest;

// smla_prepare of `problem` (max_rows 256) in a fresh context with `options`.
smla_status prepare_in_new_context(const smla_options& options, const smla_problem& problem) {
  ContextPtr context = create_context(&options);
  if (context == nullptr) return SMLA_ERR_INTERNAL;
  size_t workspace = 0;
  return smla_prepare(context.get(), &problem, 256, &workspace);
}

TEST_F(ContextPrewarmedCache, ServesAJitForbiddenContext) {
  TempDir dir;
  const std::string cache = dir.file("cache.sqlite");
  const smla_problem problem = split_problem();
  // The decode and combine kernels of the default tile and of the narrow split: what a
  // batch-invariant prepare loads (prewarm_kernels also has batch-variant mode's).
  PlanSettings invariant;
  std::unique_ptr<DecodePlan> plan;
  ASSERT_TRUE(DecodePlan::build(test::arch_of("sm_90a"), problem, invariant, {}, &plan));
  ASSERT_EQ(plan->kernels().size(), 2u);  // 16 heads: the default, the 8-head narrow split
  std::set<std::string> expected;
  for (const PlannedKernel& kernel : plan->kernels()) {
    expected.insert(kernel.decode.text());
    expected.insert(kernel.combine->text());
  }

  size_t prewarmed_workspace = 0;
  {
    const smla_options options = compile_only_options(cache.c_str(), SMLA_JIT_ALLOW);
    ContextPtr context = create_context(&options);
    ASSERT_NE(context, nullptr);
    ASSERT_EQ(smla_prepare(context.get(), &problem, 256, &prewarmed_workspace), SMLA_OK)
        << smla_last_error();
  }
  ASSERT_EQ(cached_key_texts(cache), expected);

  const smla_options options = compile_only_options(cache.c_str(), SMLA_JIT_FORBID);
  ContextPtr context = create_context(&options);
  ASSERT_NE(context, nullptr);
  size_t workspace = 0;
  EXPECT_EQ(smla_prepare(context.get(), &problem, 256, &workspace), SMLA_OK) << smla_last_error();
  EXPECT_EQ(workspace, prewarmed_workspace);
  EXPECT_EQ(cached_key_texts(cache), expected);

  smla_problem missing = problem;
  missing.num_heads = 8;
  EXPECT_EQ(smla_prepare(context.get(), &missing, 256, &workspace), SMLA_ERR_NOT_READY);
}

TEST_F(ContextPrewarmedCache, MissingNarrowKernelsAreNotReady) {
  TempDir dir;
  const std::string cache = dir.file("cache.sqlite");
  const smla_problem problem = split_problem();
  {
    // The default tile forced: only its decode and combine kernels go to the file.
    ScopedEnv forced("SMLA_TILE", default_tile(test::arch_of("sm_90a"), problem).text().c_str());
    ASSERT_EQ(prepare_in_new_context(compile_only_options(cache.c_str(), SMLA_JIT_ALLOW), problem),
              SMLA_OK)
        << smla_last_error();
  }
  ASSERT_EQ(cached_key_texts(cache).size(), 2u);
  EXPECT_EQ(prepare_in_new_context(compile_only_options(cache.c_str(), SMLA_JIT_FORBID), problem),
            SMLA_ERR_NOT_READY);
  EXPECT_NE(std::string(smla_last_error()).find("hg8."), std::string::npos) << smla_last_error();
  EXPECT_EQ(cached_key_texts(cache).size(), 2u);
}

// A cache that a batch-invariant context filled serves that mode only: a batch-variant context
// needs `missing` more kernels, named by `tile_text_part` in the error.
void expect_batch_variant_kernels_missing(const smla_problem& problem, size_t invariant_kernels,
                                          size_t missing, const char* tile_text_part) {
  TempDir dir;
  const std::string cache = dir.file("cache.sqlite");
  ASSERT_EQ(prepare_in_new_context(compile_only_options(cache.c_str(), SMLA_JIT_ALLOW), problem),
            SMLA_OK)
      << smla_last_error();
  ASSERT_EQ(cached_key_texts(cache).size(), invariant_kernels);
  smla_options options = compile_only_options(cache.c_str(), SMLA_JIT_FORBID);
  options.batch_variant = 1;
  EXPECT_EQ(prepare_in_new_context(options, problem), SMLA_ERR_NOT_READY);
  EXPECT_NE(std::string(smla_last_error()).find(tile_text_part), std::string::npos)
      << smla_last_error();
  {
    ScopedEnv invariant("SMLA_BATCH_VARIANT", "0");  // the environment overrides the option
    EXPECT_EQ(prepare_in_new_context(options, problem), SMLA_OK) << smla_last_error();
  }
  {
    // A value other than 0 or 1 is ignored, with a warning: the option's mode stays.
    ScopedEnv typo("SMLA_BATCH_VARIANT", "yes");
    testing::internal::CaptureStderr();
    EXPECT_EQ(prepare_in_new_context(options, problem), SMLA_ERR_NOT_READY);
    const std::string warnings = testing::internal::GetCapturedStderr();
    EXPECT_NE(warnings.find("ignoring SMLA_BATCH_VARIANT=yes: expected 0 or 1"), std::string::npos)
        << warnings;
  }
  EXPECT_EQ(cached_key_texts(cache).size(), invariant_kernels);
  options.jit = SMLA_JIT_ALLOW;
  EXPECT_EQ(prepare_in_new_context(options, problem), SMLA_OK) << smla_last_error();
  EXPECT_EQ(cached_key_texts(cache).size(), invariant_kernels + missing);
}

TEST_F(ContextPrewarmedCache, MissingBatchVariantKernelsAreNotReadyInBatchVariantModeOnly) {
  // 128 heads, 128 + 1024 entries on sm_90a: the default tile (the wgmma kernel in segments)
  // with its combine kernel. Batch-variant mode runs the heads-on-M tile and its narrow split
  // with theirs (the first loaded, so named), three wave splits with theirs and the fast path
  // (fast_tile: the wgmma kernel over whole rows); no few-row split fits one wave.
  const smla_problem problem = test::dsv4_compressed_problem(128, 64, 1024);
  const ArchSpec& hopper = test::arch_of("sm_90a");
  ASSERT_TRUE(fast_tile(hopper, problem).has_value());
  ASSERT_FALSE(few_row_split(hopper, problem).has_value());
  ASSERT_EQ(wave_splits(hopper, problem).size(), 3u);
  expect_batch_variant_kernels_missing(problem, 2, 11, ".mma_sync_hm");
}

TEST_F(ContextPrewarmedCache, MissingFewRowKernelsAreNotReadyInBatchVariantModeOnly) {
  // 16 heads: the few-row split adds its decode and combine kernels (loaded first, so named),
  // the two wave splits theirs, the fast path its one-segment kernel.
  const smla_problem problem = split_problem();
  ASSERT_TRUE(few_row_split(test::arch_of("sm_90a"), problem).has_value());
  ASSERT_EQ(wave_splits(test::arch_of("sm_90a"), problem).size(), 2u);
  expect_batch_variant_kernels_missing(problem, 4, 7, ".seg1.");
}

}  // namespace
}  // namespace smla::context_test
