// Shared state of the GPU tests: one device session, one context and one stream for the whole
// binary. Without a device every test is skipped, unless SMLA_PREWARM_ARCH names an
// architecture: then each test only prepares its kernels into the cache (SMLA_CACHE) and
// skips, so a GPU round can carry a cache built on a machine without a GPU.
#pragma once

#include <gtest/gtest.h>
#include <smla.h>

#include <memory>
#include <string>
#include <vector>

#include "harness/device_case.h"
#include "harness/device_session.h"
#include "reference/random_case.h"

namespace smla::gpu_test {

struct GpuEnv {
  std::unique_ptr<DeviceSession> session;
  smla_context* ctx = nullptr;
  CUstream stream = nullptr;
  std::string prewarm_arch;  // non-empty: prewarm mode
  std::string skip_reason;

  static GpuEnv& get();
};

// Skips the test when there is neither a device nor prewarm mode. In prewarm mode the checks
// below only prepare their problems.
#define SMLA_REQUIRE_GPU()                                                            \
  do {                                                                                \
    ::smla::gpu_test::GpuEnv& env_ = ::smla::gpu_test::GpuEnv::get();                 \
    if (!env_.session && env_.prewarm_arch.empty()) GTEST_SKIP() << env_.skip_reason; \
  } while (0)

// A context as the shared one is made (for the prewarm architecture in prewarm mode), or null
// with a failure added.
smla_context* create_context();

// True in prewarm mode, after preparing `problem` in `ctx` (null: the shared context): the
// caller returns without checking.
bool prewarmed(const smla_problem& problem, smla_context* ctx = nullptr);

// A problem with the given sources ({page_size, width} pairs).
smla_problem make_problem(int heads, smla_kv_layout layout, smla_dtype q_dtype, int q_len,
                          std::initializer_list<std::pair<int, int>> sources, bool sink = true,
                          bool lse = true);

// `problem` with source 0 a window and, when prefix_ratio > 0, source 1 a prefix of that ratio.
smla_problem with_structured_sources(smla_problem problem, int prefix_ratio);

// A random case of `problem` with non-unit fp8 scales (q_scale 0.75 for fp8 q, kv_scale 1.5 for
// the uniform layout), so a scale applied twice or not at all fails.
ref::CaseSpec spec_for(const smla_problem& problem, int rows, uint64_t seed);
// The same for a problem with structured sources: request b has rows[b] new rows over
// cached[b] cached tokens; 2% of the block-table entries are invalid.
ref::CaseSpec requests_spec(const smla_problem& problem, std::vector<int> rows,
                            std::vector<int> cached, uint64_t seed);

// Builds a random case, runs it on the device in `ctx` (null: the shared context) and checks it
// against the reference; returns the result for further checks. Adds a failure (with the case
// described) when it fails.
CheckResult check_case(const ref::CaseSpec& spec, const char* what,
                       const DeviceCaseOptions& options = {}, smla_context* ctx = nullptr,
                       CallEntry entry = CallEntry::kDecode);

}  // namespace smla::gpu_test
