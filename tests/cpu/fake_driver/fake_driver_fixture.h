// Shared by the fake-driver tests: they run with tests/fake_cuda's libcuda.so.1 first on
// LD_LIBRARY_PATH (CMakeLists.txt sets it), so a context finds one Hopper device whose driver
// records what the runtime asks of it. Kernels are compiled for real (NVRTC) into one cache file
// in the build tree, so the tests' processes compile each kernel once; the fake never runs them.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "fake_cuda/fake_cuda.h"
#include "runtime/context.h"
#include "support/scoped_env.h"

namespace smla::fake_driver_test {

class FakeDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The same handle the runtime's dlopen gets: the fake's state is the one it talks to.
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(library, nullptr) << dlerror();
    const auto reset =
        reinterpret_cast<fake_cuda::ResetFn>(dlsym(library, fake_cuda::kResetSymbol));
    ASSERT_NE(reset, nullptr) << "libcuda.so.1 is not the fake driver: run with "
                                 "LD_LIBRARY_PATH=" SMLA_FAKE_CUDA_DIR;
    fake_ = reset();
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
  void fail(const char* call, CUresult result, int after = 0) const {
    fake_->fail_call = call;
    fake_->fail_result = result;
    fake_->fail_after = calls(call) + after;
  }

  fake_cuda::State* fake_ = nullptr;

 private:
  ScopedEnv cache_{"SMLA_CACHE", nullptr};
  ScopedEnv system_cache_{"SMLA_SYSTEM_CACHE", nullptr};
  ScopedEnv jit_{"SMLA_JIT", nullptr};
  ScopedEnv batch_invariant_{"SMLA_BATCH_INVARIANT", nullptr};
  ScopedEnv tuning_{"SMLA_TUNING", nullptr};
  ScopedEnv log_{"SMLA_LOG", nullptr};
  ScopedEnv tile_{"SMLA_TILE", nullptr};
};

}  // namespace smla::fake_driver_test
