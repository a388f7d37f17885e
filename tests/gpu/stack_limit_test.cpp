// smla_prepare raises the context's stack limit to the local memory a thread of a prepared
// kernel needs (on sm_90a the default 128-head kernel keeps its folded total there, 512 bytes),
// so that no launch has the driver grow it; the calls' results stay right.
#include "gpu_env.h"
#include "runtime/cuda_driver.h"
#include "runtime/device_info.h"

namespace smla::gpu_test {
namespace {

// Sets the current context's stack limit and puts the one before back on destruction.
class ScopedStackLimit {
 public:
  ScopedStackLimit(const CudaDriver& driver, size_t bytes) : driver_(driver) {
    EXPECT_EQ(driver_.cuCtxGetLimit(&before_, CU_LIMIT_STACK_SIZE), CUDA_SUCCESS);
    EXPECT_EQ(driver_.cuCtxSetLimit(CU_LIMIT_STACK_SIZE, bytes), CUDA_SUCCESS);
  }
  ~ScopedStackLimit() { driver_.cuCtxSetLimit(CU_LIMIT_STACK_SIZE, before_); }
  ScopedStackLimit(const ScopedStackLimit&) = delete;
  ScopedStackLimit& operator=(const ScopedStackLimit&) = delete;

  size_t now() const {
    size_t bytes = 0;
    EXPECT_EQ(driver_.cuCtxGetLimit(&bytes, CU_LIMIT_STACK_SIZE), CUDA_SUCCESS);
    return bytes;
  }

 private:
  const CudaDriver& driver_;
  size_t before_ = 0;
};

TEST(StackLimit, PrepareRaisesALimitBelowAKernelsLocalMemory) {
  SMLA_REQUIRE_GPU();
  const smla_problem problem =
      make_problem(128, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 1024}});
  if (prewarmed(problem)) return;
  GpuEnv& env = GpuEnv::get();
  DeviceInfo device;
  ASSERT_TRUE(env.session->info(&device).is_ok());
  // The shared context (smla's, on the same primary context) has prepared kernels already;
  // a context of its own prepares after the limit is lowered.
  const ScopedStackLimit limit(env.session->driver(), 16);
  smla_context* ctx = create_context();
  ASSERT_NE(ctx, nullptr);
  // Prepare raises the limit before any launch (a launch would make the driver raise it).
  size_t workspace_bytes = 0;
  ASSERT_EQ(smla_prepare(ctx, &problem, 48, &workspace_bytes), SMLA_OK) << smla_last_error();
  const size_t prepared = limit.now();
  if (device.arch->wgmma) {
    EXPECT_GE(prepared, 512u);
  }
  // Split rows, prefix items and whole rows (the kernel that folds in local memory); no launch
  // needs more.
  for (const int rows : {3, 24, 48}) {
    check_case(spec_for(problem, rows, 1300 + rows), "after a 16-byte stack limit", {}, ctx);
  }
  EXPECT_EQ(limit.now(), prepared);
  smla_context_destroy(ctx);
}

}  // namespace
}  // namespace smla::gpu_test
