// smla_decode on a device: what it launches (the scheduled kernel's grid, block and shared
// memory, the combine kernel after the decode kernel with programmatic dependent launch, the
// parameters), in the context it holds whatever is current on the caller's thread, and how a
// failed launch or a capturing stream is reported.
#include <cstring>
#include <string>

#include "codegen/launch_params.h"
#include "cpu/runtime/validate_fixture.h"
#include "fake_driver_fixture.h"
#include "plan/decode_scheduler.h"

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
  return p.context->decode(valid_problem(), valid_args(valid_problem(), num_rows), nullptr,
                           p.workspace, p.workspace_bytes, stream);
}

// A kernel that needs more local memory a thread than the context's stack limit would make
// the driver allocate at its first launch; prepare raises the limit instead, once, and only
// where it is lower.
TEST_F(DecodeLaunches, PrepareRaisesAStackLimitBelowAKernelsLocalMemory) {
  fake_->local_bytes = 512;
  fake_->stack_limit = 256;
  const Prepared p = prepare(create_context());
  ASSERT_NE(p.context, nullptr);
  EXPECT_EQ(fake_->stack_limit, 512u);
  EXPECT_EQ(calls("cuCtxSetLimit"), 1);
  for (const int rows : {1, 256}) {
    ASSERT_TRUE(decode(p, rows));
    for (const fake_cuda::Launch& launch : fake_->launches) EXPECT_FALSE(launch.grows_stack);
  }
  // CUDA's default limit (1 KiB) is enough: left as it is, and so is a limit without need.
  for (const int local_bytes : {512, 0}) {
    SCOPED_TRACE(local_bytes);
    fake_->stack_limit = 1024;
    fake_->local_bytes = local_bytes;
    const int set_before = calls("cuCtxSetLimit"), get_before = calls("cuCtxGetLimit");
    ASSERT_NE(prepare(create_context()).context, nullptr);
    EXPECT_EQ(fake_->stack_limit, 1024u);
    EXPECT_EQ(calls("cuCtxSetLimit"), set_before);
    EXPECT_EQ(calls("cuCtxGetLimit") > get_before, local_bytes > 0);
  }
}

TEST_F(DecodeLaunches, EachCallLaunchesItsScheduledKernels) {
  const Prepared p = prepare(create_context());
  ASSERT_NE(p.context, nullptr);
  const DecodePlan* planned = p.context->plan(valid_problem());
  ASSERT_NE(planned, nullptr);
  fake_->param_bytes = sizeof(DecodeParams);
  const auto stream = reinterpret_cast<CUstream>(0x5000);
  // 16 heads of 128 + 512 entries: few rows split over the narrow split's 8-head CTAs or the
  // default tile's segments, 97 rows into prefix items (2 of 5 segments, then one each), 256
  // run whole rows.
  for (const auto& [rows, split] :
       {std::make_pair(1, true), std::make_pair(3, true), std::make_pair(64, true),
        std::make_pair(97, true), std::make_pair(256, false)}) {
    SCOPED_TRACE(rows);
    fake_->launches.clear();
    ASSERT_TRUE(decode(p, rows, stream));
    const PlannedCall call = planned->call(rows, planned->workspace_bytes(rows));
    const DecodeLaunch& plan = call.launch;
    ASSERT_EQ(plan.split, split);
    ASSERT_EQ(fake_->launches.size(), split ? 2u : 1u);
    const DecodeKernel& key = planned->kernels()[call.kernel].decode;
    EXPECT_EQ(planned->kernels()[call.kernel].role,
              plan.narrow < 0 ? KernelRole::kDefault : KernelRole::kNarrow);
    const TileConfig& tile = key.tile;
    const fake_cuda::Launch& kernel = fake_->launches[0];
    EXPECT_EQ(kernel.function, "smla_decode");
    // Prefix calls: a grid row per item of a row (work_item).
    EXPECT_EQ(kernel.grid_y, rows == 97 ? 4u : 1u);
    EXPECT_EQ(kernel.grid * kernel.grid_y, plan.decode_blocks);
    EXPECT_EQ(kernel.block, 32u * tile.warps);
    EXPECT_EQ(kernel.shared_bytes, key.geometry().smem_bytes);
    EXPECT_FALSE(kernel.programmatic);
    EXPECT_EQ(kernel.stream, stream);
    DecodeParams params;
    ASSERT_EQ(kernel.params.size(), sizeof params);
    std::memcpy(&params, kernel.params.data(), sizeof params);
    EXPECT_EQ(params.num_rows, rows);
    EXPECT_EQ(params.split, split ? 1 : 0);
    EXPECT_EQ(params.prefix_segments, rows == 97 ? 2 : 1);
    EXPECT_EQ(plan.prefix_segments, params.prefix_segments);
    EXPECT_EQ(params.folds, !split || rows == 97 ? 1 : 0);
    EXPECT_EQ(params.out, valid_args(valid_problem(), rows).out);
    EXPECT_EQ(params.partial_out, split ? p.workspace : nullptr);
    if (split) {
      const fake_cuda::Launch& combine = fake_->launches[1];
      EXPECT_EQ(combine.function, rows == 97 ? "smla_combine_prefix" : "smla_combine");
      EXPECT_NE(combine.module, kernel.module);
      EXPECT_EQ(combine.grid, plan.combine_blocks);
      EXPECT_EQ(combine.grid_y, 1u);
      EXPECT_EQ(combine.block, static_cast<unsigned>(key.combine().threads()));
      EXPECT_EQ(combine.shared_bytes, 0u);
      EXPECT_TRUE(combine.programmatic);
      EXPECT_EQ(combine.stream, stream);
      EXPECT_EQ(combine.params, kernel.params);
    }
  }
}

TEST_F(DecodeLaunches, RunInTheirContextAndLeaveTheCallersCurrent) {
  const Prepared p = prepare(create_context());
  ASSERT_NE(p.context, nullptr);
  struct Callers {
    const char* what;
    CUcontext context;
  };
  for (const Callers& callers : {Callers{"no context current", nullptr},
                                 Callers{"another context current", fake_cuda::other_context()},
                                 Callers{"the device's current", fake_cuda::primary_context()}}) {
    SCOPED_TRACE(callers.what);
    if (callers.context != nullptr) {
      ASSERT_EQ(driver_->cuCtxPushCurrent(callers.context), CUDA_SUCCESS);
    }
    fake_->launches.clear();
    // The fake refuses a launch outside the context the kernel was loaded in.
    EXPECT_TRUE(decode(p, 1));
    EXPECT_EQ(fake_->launches.size(), 2u);
    EXPECT_EQ(current_context(), callers.context);
    CUcontext popped = nullptr;
    if (callers.context != nullptr) {
      ASSERT_EQ(driver_->cuCtxPopCurrent(&popped), CUDA_SUCCESS);
    }
    EXPECT_EQ(current_context(), nullptr);
  }
}

TEST_F(DecodeLaunches, AFailedLaunchIsACudaErrorNamingTheKernel) {
  const Prepared p = prepare(create_context());
  ASSERT_NE(p.context, nullptr);
  // One row splits: the decode kernel, then the combine kernel.
  ASSERT_TRUE(p.context->plan(valid_problem())->call(1, p.workspace_bytes).launch.split);
  for (const auto& [after, kernel] : {std::make_pair(0, "decode"), std::make_pair(1, "combine")}) {
    SCOPED_TRACE(kernel);
    fake_->launches.clear();
    fail("cuLaunchKernelEx", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, after);
    const Status status = decode(p, 1);
    EXPECT_EQ(status.code(), SMLA_ERR_CUDA);
    EXPECT_NE(status.message().find(std::string("cuLaunchKernelEx(") + kernel +
                                    ") failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"),
              std::string::npos)
        << status.message();
    EXPECT_EQ(fake_->launches.size(), static_cast<size_t>(after));
    EXPECT_EQ(current_context(), nullptr) << "the context pushed for the call is popped";
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
  const Status status = context->decode(valid_problem(), valid_args(valid_problem(), 1), nullptr,
                                        workspace, 1 << 30, nullptr);
  EXPECT_EQ(status.code(), SMLA_ERR_NOT_READY);
  EXPECT_NE(status.message().find("call smla_prepare first"), std::string::npos)
      << status.message();
  EXPECT_EQ(calls("cuModuleLoadData"), 0);
  EXPECT_TRUE(fake_->launches.empty());
  // Prepared: the call is captured like any other.
  ASSERT_TRUE(context->prepare(valid_problem(), kMaxRows, &workspace_bytes));
  EXPECT_TRUE(context->decode(valid_problem(), valid_args(valid_problem(), 1), nullptr, workspace,
                              workspace_bytes, nullptr));
  EXPECT_FALSE(fake_->launches.empty());
}

}  // namespace
}  // namespace smla::fake_driver_test
