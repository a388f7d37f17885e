// A context without a device but with options.arch compiles for that arch: smla_prepare with a
// memory-only cache builds the decode and combine kernels and returns the workspace the
// scheduler computes; preparing again finds the prepared problem and compiles nothing.
#include <chrono>

#include "context_fixture.h"
#include "plan/decode_scheduler.h"

namespace smla::context_test {
namespace {

using ContextMemoryPrepare = NoGpuContextTest;

double prepare_ms(smla_context* context, const smla_problem& problem, int max_rows,
                  size_t* workspace) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(smla_prepare(context, &problem, max_rows, workspace), SMLA_OK) << smla_last_error();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

TEST_F(ContextMemoryPrepare, CompilesOnceAndReturnsTheSchedulersWorkspace) {
  const smla_options options = compile_only_options("");
  ContextPtr context = create_context(&options);
  ASSERT_NE(context, nullptr);
  const smla_problem problem = split_problem();
  const DecodeScheduler scheduler(default_decode_key(problem));
  ASSERT_GT(scheduler.geometry().segments, 1);

  size_t workspace = 0;
  prepare_ms(context.get(), problem, 1024, &workspace);
  EXPECT_EQ(workspace, scheduler.workspace_bytes(1024));
  EXPECT_GT(workspace, 0u);

  for (int max_rows : {1, 2, 3, 47, 48, 1024, 1 << 24}) {
    SCOPED_TRACE(max_rows);
    // NOTE: a recompile of the decode kernel takes hundreds of milliseconds.
    EXPECT_LT(prepare_ms(context.get(), problem, max_rows, &workspace), 50.0);
    EXPECT_EQ(workspace, scheduler.workspace_bytes(max_rows));
  }
  {
    SCOPED_TRACE("a single-segment problem needs no workspace");
    const smla_problem window = test::dsv4_window_problem(16);
    ASSERT_EQ(DecodeScheduler(default_decode_key(window)).geometry().segments, 1);
    workspace = 1;
    prepare_ms(context.get(), window, 1024, &workspace);
    EXPECT_EQ(workspace, 0u);
  }
}

}  // namespace
}  // namespace smla::context_test
