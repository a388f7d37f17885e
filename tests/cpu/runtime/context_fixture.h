// Shared by the context_*_test.cpp files: contexts on a machine without a GPU, which compile
// and cache kernels for a named arch (options.arch) but run nothing. The fixture clears every
// SMLA_* variable for the test (ClearedSmlaEnvironment).
#pragma once

#include <gtest/gtest.h>
#include <smla.h>

#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include "autotune/heuristics.h"
#include "cache/cubin_store.h"
#include "codegen/kernel_key.h"
#include "cpu/codegen/dsv4_problems.h"
#include "runtime/cuda_driver.h"
#include "support/arch_of.h"
#include "support/cleared_smla_environment.h"
#include "support/scoped_env.h"
#include "support/scratch.h"
#include "support/store_reads.h"

namespace smla::context_test {

using test::TempDir;

struct ContextDeleter {
  void operator()(smla_context* context) const { smla_context_destroy(context); }
};
using ContextPtr = std::unique_ptr<smla_context, ContextDeleter>;

// smla_context_create(options); null (with a test failure) if it fails.
inline ContextPtr create_context(const smla_options* options) {
  smla_context* context = nullptr;
  const smla_status status = smla_context_create(options, &context);
  EXPECT_EQ(status, SMLA_OK) << smla_last_error();
  return ContextPtr(status == SMLA_OK ? context : nullptr);
}

// A context without a device that compiles for sm_90a; cache_path "" keeps kernels in memory.
inline smla_options compile_only_options(const char* cache_path,
                                         smla_jit_policy jit = SMLA_JIT_ALLOW) {
  smla_options options;
  smla_options_init(&options);
  options.arch = "sm_90a";
  options.cache_path = cache_path;
  options.jit = jit;
  return options;
}

// DSv4-Flash CSA at TP 4: its decode kernel has several segments, so smla_prepare also needs
// the combine kernel and returns a nonzero workspace.
inline smla_problem split_problem() { return test::dsv4_compressed_problem(16, 64, 512); }

// The decode kernel a batch-invariant sm_90a context with no SMLA_TILE builds for `problem`.
inline DecodeKernel default_decode_key(const smla_problem& problem) {
  return DecodeKernel::of(test::arch_of("sm_90a"), problem,
                          default_tile(test::arch_of("sm_90a"), problem));
}

// The key texts of every kernel in the cache file at `path`.
inline std::set<std::string> cached_key_texts(const std::string& path) {
  Logger log;
  CubinStore::Options options;
  options.path = path;
  std::set<std::string> texts;
  for (const KernelEntry& entry : test::listed(*CubinStore::open(options, log))) {
    texts.insert(entry.key_text);
  }
  return texts;
}

inline bool machine_has_gpu() {
  Status status;
  const CudaDriver* driver = CudaDriver::get(&status);
  int devices = 0;
  return driver != nullptr && driver->cuDeviceGetCount(&devices) == CUDA_SUCCESS && devices > 0;
}

class NoGpuContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // With a device, a context builds for the device's arch and loads what it builds: the
    // behaviour these tests pin down is the one of a machine without a GPU.
    if (machine_has_gpu()) GTEST_SKIP() << "a GPU is present; these tests need a machine without";
  }

 private:
  test::ClearedSmlaEnvironment environment_;
};

}  // namespace smla::context_test
