// A cache file prewarmed by a context that may compile serves a context that may not: the
// JIT-forbidden context prepares from the file alone (it could not compile), gets the same
// workspace, and adds nothing to the cache; a problem the file lacks stays NOT_READY.
#include <set>
#include <string>

#include "context_fixture.h"

namespace smla::context_test {
namespace {

using ContextPrewarmedCache = NoGpuContextTest;

TEST_F(ContextPrewarmedCache, ServesAJitForbiddenContext) {
  TempDir dir;
  const std::string cache = dir.file("cache.sqlite");
  const smla_problem problem = split_problem();
  // The decode and combine kernels of the default tile and of the narrow split.
  std::set<std::string> expected;
  for (const KernelKey& key : default_problem_kernels("sm_90a", problem))
    expected.insert(key.text());
  ASSERT_EQ(expected.size(), 4u);

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

}  // namespace
}  // namespace smla::context_test
