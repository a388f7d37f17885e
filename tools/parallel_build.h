// Builds a list of kernels through one KernelBuilder with a pool of worker threads: each kernel
// comes from the cache or is compiled (once across processes, by the store's leases).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "codegen/kernel_key.h"
#include "runtime/kernel_builder.h"
#include "support/status.h"

namespace smla::tools {

struct BuildCounts {
  int total = 0;
  int compiled = 0;
  int cached = 0;
  int failed = 0;
  int done() const { return compiled + cached + failed; }
};

struct KernelBuildOutcome {
  std::string key_text;
  Status status;
  bool compiled = false;  // this process ran NVRTC for it
  double compile_ms = 0;
  int64_t cubin_bytes = 0;
};

struct ParallelBuildReport {
  BuildCounts counts;
  std::vector<KernelBuildOutcome> kernels;  // in the order of the keys
  double seconds = 0;

  double median_compile_ms() const;  // of the kernels compiled here; 0 when none
  int64_t cubin_bytes() const;       // of every kernel built
};

// Called with the counts so far before the first kernel and after each; calls never overlap.
using BuildProgressFn = std::function<void(const BuildCounts&)>;

// `jobs` <= 0: one worker per hardware thread.
ParallelBuildReport build_in_parallel(const KernelBuilder& builder,
                                      const std::vector<KernelKey>& keys, int jobs,
                                      const BuildProgressFn& progress);

}  // namespace smla::tools
