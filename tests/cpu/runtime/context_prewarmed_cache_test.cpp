// A cache file prewarmed by a context that may compile serves a context that may not: the
// JIT-forbidden context prepares from the file alone (it could not compile), gets the same
// workspace, and adds nothing to the cache; a problem the file lacks stays NOT_READY, and so
// does one whose narrow-split kernels the file lacks, or (in batch-variant mode) whose fast
// path kernel it lacks.
#include <set>
#include <string>

#include "context_fixture.h"

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
  // The decode and combine kernels of the default tile and of the narrow split.
  std::set<std::string> expected;
  for (const KernelKey& key : default_problem_kernels("sm_90a", problem))
    expected.insert(key.text());
  ASSERT_EQ(expected.size(), 4u);  // 16 heads: the 8-head narrow split

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
    ScopedEnv forced("SMLA_TILE", default_tile_config(problem).text().c_str());
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

TEST_F(ContextPrewarmedCache, MissingFastPathKernelIsNotReadyInBatchVariantModeOnly) {
  TempDir dir;
  const std::string cache = dir.file("cache.sqlite");
  // 64 heads, the window only: one segment, so the default tile has one kernel, the fast path
  // (batch_variant_tile) another.
  const smla_problem problem = test::dsv4_window_problem(64);
  ASSERT_TRUE(batch_variant_tile("sm_90a", problem).has_value());
  ASSERT_EQ(prepare_in_new_context(compile_only_options(cache.c_str(), SMLA_JIT_ALLOW), problem),
            SMLA_OK)
      << smla_last_error();
  ASSERT_EQ(cached_key_texts(cache).size(), 1u);
  smla_options options = compile_only_options(cache.c_str(), SMLA_JIT_FORBID);
  options.batch_invariant = 0;
  EXPECT_EQ(prepare_in_new_context(options, problem), SMLA_ERR_NOT_READY);
  EXPECT_NE(std::string(smla_last_error()).find(".wgmma"), std::string::npos) << smla_last_error();
  {
    ScopedEnv invariant("SMLA_BATCH_INVARIANT", "1");  // the environment overrides the option
    EXPECT_EQ(prepare_in_new_context(options, problem), SMLA_OK) << smla_last_error();
  }
  EXPECT_EQ(cached_key_texts(cache).size(), 1u);
  options.jit = SMLA_JIT_ALLOW;
  EXPECT_EQ(prepare_in_new_context(options, problem), SMLA_OK) << smla_last_error();
  EXPECT_EQ(cached_key_texts(cache).size(), 2u);
}

}  // namespace
}  // namespace smla::context_test
