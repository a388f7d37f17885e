// smla_prepare on a device: every kernel is loaded once, in the device's context (with the stack
// limit raised to what it needs); a load that fails undoes the loads before it and is reported,
// leaving the context usable.
#include <string>

#include "cpu/runtime/validate_fixture.h"
#include "fake_driver_fixture.h"
#include "plan/decode_plan.h"

namespace smla::fake_driver_test {
namespace {

using Prepare = FakeDriverTest;
using validate_test::valid_problem;

// The kernels a batch-invariant context loads for `problem`: the decode kernel of the default
// tile and of each narrow split, and the combine kernel of each that splits.
int default_mode_kernels(const smla_problem& problem) {
  std::unique_ptr<DecodePlan> plan;
  EXPECT_TRUE(DecodePlan::build(*find_arch("sm_90a"), problem, PlanSettings{}, {}, &plan));
  int kernels = 0;
  for (const PlannedKernel& k : plan->kernels()) kernels += k.combine ? 2 : 1;
  return kernels;
}

TEST_F(Prepare, LoadsEveryKernelOnceInTheDevicesContextAndUnloadsThemWithIt) {
  std::unique_ptr<Context> context = create_context();
  ASSERT_NE(context, nullptr);
  size_t workspace = 0;
  ASSERT_TRUE(context->prepare(valid_problem(), 64, &workspace));
  EXPECT_GT(workspace, 0u);  // split calls: a combine kernel is loaded too
  // 16 heads of 128 + 512 entries: the default tile and the 8-head narrow split, both split.
  EXPECT_EQ(default_mode_kernels(valid_problem()), 4);
  EXPECT_EQ(fake_->modules_loaded, 4);
  EXPECT_EQ(calls("cuModuleLoadData"), 4);
  // A combine kernel's module holds two kernels (plain splits and prefix calls).
  EXPECT_EQ(calls("cuModuleGetFunction"), 6);
  ASSERT_TRUE(context->prepare(valid_problem(), 64, &workspace));
  EXPECT_EQ(calls("cuModuleLoadData"), 4) << "a prepared problem is not loaded again";
  EXPECT_EQ(current_context(), nullptr);
  context.reset();
  EXPECT_EQ(fake_->modules_loaded, 0) << "every kernel unloaded, in the device's context";
  EXPECT_EQ(fake_->primary_retained, 0);
}

TEST_F(Prepare, AFailedLoadUndoesTheLoadsBeforeItAndIsReported) {
  struct Failure {
    const char* call;
    CUresult result;
    const char* name;
  };
  for (const Failure& failure :
       {Failure{"cuModuleLoadData", CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE"},
        Failure{"cuModuleGetFunction", CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"},
        Failure{"cuFuncSetAttribute", CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"},
        Failure{"cuFuncGetAttribute", CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE"},
        Failure{"cuCtxGetLimit", CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT"},
        Failure{"cuCtxSetLimit", CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"}}) {
    // The first kernel's call, then the next kernel's (the default tile's decode kernel is
    // loaded then).
    for (const int after : {0, 1}) {
      // Once raised, the stack limit is not set again for the next kernel.
      if (std::string(failure.call) == "cuCtxSetLimit" && after > 0) continue;
      SCOPED_TRACE(std::string(failure.call) + " after " + std::to_string(after));
      // Kernels that need more stack than the limit, which prepare then raises for each.
      fake_->local_bytes = 2048;
      fake_->stack_limit = 0;
      std::unique_ptr<Context> context = create_context();
      ASSERT_NE(context, nullptr);
      fail(failure.call, failure.result, after);
      size_t workspace = 123;
      const Status status = context->prepare(valid_problem(), 64, &workspace);
      EXPECT_EQ(status.code(), SMLA_ERR_CUDA);
      EXPECT_EQ(status.message().find(failure.call), 0u) << status.message();
      EXPECT_NE(status.message().find(std::string(" failed: ") + failure.name), std::string::npos)
          << status.message();
      EXPECT_EQ(workspace, 123u);
      EXPECT_EQ(fake_->modules_loaded, 0) << "every kernel loaded before the failure is unloaded";
      // The driver recovers: the same context prepares the problem.
      fake_->fail_call.clear();
      EXPECT_TRUE(context->prepare(valid_problem(), 64, &workspace));
      EXPECT_EQ(fake_->modules_loaded, 4);
      context.reset();
      EXPECT_EQ(fake_->modules_loaded, 0);
    }
  }
}

}  // namespace
}  // namespace smla::fake_driver_test
