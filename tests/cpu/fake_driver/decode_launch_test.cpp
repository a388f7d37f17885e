// smla_decode on a device: what it launches (the scheduler's grids, the combine kernel after
// the decode kernel with programmatic dependent launch), in the context it holds whatever is
// current on the caller's thread, and how a failed launch or a capturing stream is reported.
#include <string>

#include "cpu/runtime/validate_fixture.h"
#include "fake_driver_fixture.h"

namespace smla::fake_driver_test {
namespace {

using DecodeLaunches = FakeDriverTest;
using validate_test::fake_pointer;
using validate_test::valid_args;
using validate_test::valid_problem;

constexpr int kMaxRows = 256;

// A context with valid_problem() prepared for kMaxRows rows, and a workspace of that size.
struct Prepared {
  std::unique_ptr<Context> context;
  size_t workspace_bytes = 0;
  void* workspace = fake_pointer<void>(10);
};

Prepared prepare(std::unique_ptr<Context> context) {
  Prepared p{std::move(context)};
  if (p.context != nullptr) {
    const Status status = p.context->prepare(valid_problem(), kMaxRows, &p.workspace_bytes);
    EXPECT_TRUE(status) << status.message();
  }
  return p;
}

Status decode(const Prepared& p, int num_rows, CUstream stream = nullptr) {
  return p.context->decode(valid_problem(), valid_args(valid_problem(), num_rows), p.workspace,
                           p.workspace_bytes, stream);
}

TEST_F(DecodeLaunches, EachCallLaunchesTheScheduledGrids) {
  const Prepared p = prepare(create_context());
  ASSERT_NE(p.context, nullptr);
  const auto stream = reinterpret_cast<CUstream>(0x5000);
  for (const int rows : {1, 3, 64, 256}) {
    SCOPED_TRACE(rows);
    fake_->launches.clear();
    ASSERT_TRUE(decode(p, rows, stream));
    const std::optional<Context::PlannedCall> planned =
        p.context->planned_call(valid_problem(), rows);
    ASSERT_TRUE(planned.has_value());
    const DecodeLaunch& plan = planned->choice.launch;
    ASSERT_EQ(fake_->launches.size(), plan.split ? 2u : 1u);
    const fake_cuda::Launch& decode_launch = fake_->launches[0];
    EXPECT_EQ(decode_launch.function, "smla_decode");
    EXPECT_EQ(decode_launch.grid, plan.decode_blocks);
    EXPECT_GT(decode_launch.shared_bytes, 48u * 1024) << "the default 16-head tile's stages";
    EXPECT_FALSE(decode_launch.programmatic);
    EXPECT_EQ(decode_launch.stream, stream);
    if (plan.split) {
      const fake_cuda::Launch& combine = fake_->launches[1];
      EXPECT_EQ(combine.function, "smla_combine");
      EXPECT_EQ(combine.grid, plan.combine_blocks);
      EXPECT_TRUE(combine.programmatic);
      EXPECT_EQ(combine.stream, stream);
    }
  }
  EXPECT_EQ(fake_->calls_without_context, 0);
}

TEST_F(DecodeLaunches, RunInTheirContextAndLeaveTheCallersCurrent) {
  const Prepared p = prepare(create_context());
  ASSERT_NE(p.context, nullptr);
  Status status;
  const CudaDriver* driver = CudaDriver::get(&status);
  ASSERT_NE(driver, nullptr) << status.message();
  for (const CUcontext callers : {CUcontext{nullptr}, fake_cuda::other_context(),
                                  fake_cuda::primary_context()}) {
    SCOPED_TRACE(callers == nullptr ? "none current" : "one current");
    if (callers != nullptr) {
      ASSERT_EQ(driver->cuCtxPushCurrent(callers), CUDA_SUCCESS);
    }
    fake_->calls_without_context = 0;
    ASSERT_TRUE(decode(p, 1));
    EXPECT_EQ(fake_->calls_without_context, 0);
    CUcontext current = nullptr;
    ASSERT_EQ(driver->cuCtxGetCurrent(&current), CUDA_SUCCESS);
    EXPECT_EQ(current, callers);
    if (callers != nullptr) {
      ASSERT_EQ(driver->cuCtxPopCurrent(&current), CUDA_SUCCESS);
    }
    ASSERT_EQ(driver->cuCtxGetCurrent(&current), CUDA_SUCCESS);
    EXPECT_EQ(current, nullptr);
  }
}

TEST_F(DecodeLaunches, AFailedLaunchIsACudaErrorNamingTheKernel) {
  const Prepared p = prepare(create_context());
  ASSERT_NE(p.context, nullptr);
  // One row splits: the decode kernel, then the combine kernel.
  ASSERT_TRUE(p.context->planned_call(valid_problem(), 1)->choice.launch.split);
  for (const auto& [after, kernel] : {std::make_pair(0, "decode"), std::make_pair(1, "combine")}) {
    SCOPED_TRACE(kernel);
    fail("cuLaunchKernelEx", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, after);
    const Status status = decode(p, 1);
    EXPECT_EQ(status.code(), SMLA_ERR_CUDA);
    EXPECT_NE(status.message().find(std::string("cuLaunchKernelEx(") + kernel +
                                    ") failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"),
              std::string::npos)
        << status.message();
    CUcontext current = reinterpret_cast<CUcontext>(1);
    Status driver_status;
    ASSERT_EQ(CudaDriver::get(&driver_status)->cuCtxGetCurrent(&current), CUDA_SUCCESS);
    EXPECT_EQ(current, nullptr) << "the context pushed for the call is popped";
  }
  fake_->fail_call.clear();
  EXPECT_TRUE(decode(p, 1));
}

TEST_F(DecodeLaunches, ACapturingStreamNeedsAPreparedProblem) {
  std::unique_ptr<Context> context = create_context();
  ASSERT_NE(context, nullptr);
  fake_->capture = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  size_t workspace_bytes = 0;
  void* workspace = fake_pointer<void>(10);
  // Not prepared: nothing may be compiled or loaded while a graph is being captured.
  const Status status = context->decode(valid_problem(), valid_args(valid_problem(), 1), workspace,
                                        1 << 30, nullptr);
  EXPECT_EQ(status.code(), SMLA_ERR_NOT_READY);
  EXPECT_NE(status.message().find("call smla_prepare first"), std::string::npos)
      << status.message();
  EXPECT_EQ(calls("cuModuleLoadData"), 0);
  EXPECT_TRUE(fake_->launches.empty());
  // Prepared: the call is captured like any other.
  ASSERT_TRUE(context->prepare(valid_problem(), kMaxRows, &workspace_bytes));
  EXPECT_TRUE(context->decode(valid_problem(), valid_args(valid_problem(), 1), workspace,
                              workspace_bytes, nullptr));
  EXPECT_FALSE(fake_->launches.empty());
}

}  // namespace
}  // namespace smla::fake_driver_test
