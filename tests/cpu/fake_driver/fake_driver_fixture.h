// Shared by the fake-driver tests: they run with tests/fake_cuda's libcuda.so.1 first on
// LD_LIBRARY_PATH (CMakeLists.txt sets it), so a context finds one Hopper device whose driver
// records what the runtime asks of it. Kernels are compiled for real (NVRTC), by default into
// one cache file in the build tree, so the tests' processes compile each kernel once; the fake
// never runs them. The driver is loaded once per process, so its load and cuInit failures are
// not testable here.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "fake_cuda/fake_cuda.h"
#include "runtime/context.h"
#include "support/cleared_smla_environment.h"

namespace smla::fake_driver_test {

// The fake's state, reset; null if libcuda.so.1 is not the fake. It is the same library the
// runtime's dlopen gets, so the state is the one the runtime talks to.
inline fake_cuda::State* reset_fake_driver() {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  const auto reset = reinterpret_cast<fake_cuda::ResetFn>(
      library != nullptr ? dlsym(library, fake_cuda::kResetSymbol) : nullptr);
  return reset != nullptr ? reset() : nullptr;
}

class FakeDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_ = reset_fake_driver();
    ASSERT_NE(fake_, nullptr) << "libcuda.so.1 is not the fake driver: run with "
                                 "LD_LIBRARY_PATH=" SMLA_FAKE_CUDA_DIR;
    Status status;
    driver_ = CudaDriver::get(&status);
    ASSERT_NE(driver_, nullptr) << status.message();
  }

  // Options of a context on the fake device; kernels come from (or go to) the shared cache.
  static smla_options options() {
    smla_options o;
    smla_options_init(&o);
    o.cache_path = SMLA_FAKE_DRIVER_CACHE;
    return o;
  }

  // Context::create with options(); fails the test (and returns null) if it fails.
  static std::unique_ptr<Context> create_context() {
    const smla_options o = options();
    std::unique_ptr<Context> context;
    const Status status = Context::create(&o, &context);
    EXPECT_TRUE(status) << status.message();
    return context;
  }

  int calls(const char* name) const {
    const auto found = fake_->calls.find(name);
    return found == fake_->calls.end() ? 0 : found->second;
  }

  // `call` fails with `result` from its (after + 1)-th call on, counted from now.
  void fail(const char* call, CUresult result, int after = 0) {
    fake_->fail_call = call;
    fake_->fail_result = result;
    fake_->fail_after = calls(call) + after;
  }

  // The calling thread's current context (null: none), as the caller of smla sees it.
  CUcontext current_context() const {
    CUcontext current = reinterpret_cast<CUcontext>(1);
    EXPECT_EQ(driver_->cuCtxGetCurrent(&current), CUDA_SUCCESS);
    return current;
  }

  fake_cuda::State* fake_ = nullptr;
  const CudaDriver* driver_ = nullptr;

 private:
  test::ClearedSmlaEnvironment environment_;
};

}  // namespace smla::fake_driver_test
