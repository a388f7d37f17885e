// Builds a list of kernels with a pool of worker processes: each kernel comes from the cache or
// is compiled (once across processes, by the store's leases).
// NOTE: processes, not threads: NVRTC compiles one program at a time in a process (two threads
// measured no faster than one).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cache/cubin_store.h"
#include "codegen/kernel_key.h"
#include "support/log.h"
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
  bool kept = false;      // its cubin is in the cache file (not only in a process's memory)
  double compile_ms = 0;
  int64_t cubin_bytes = 0;
};

struct ParallelBuildReport {
  BuildCounts counts;
  std::vector<KernelBuildOutcome> kernels;  // in the order of the keys
  double seconds = 0;

  double median_compile_ms() const;  // of the kernels compiled here; 0 when none
  int64_t cubin_bytes() const;       // of every kernel built
  int not_kept() const;              // kernels built that are not in the cache file
};

// Called with the counts so far before the first kernel and after each; calls never overlap.
using BuildProgressFn = std::function<void(const BuildCounts&)>;

// Each worker opens the cache `store_options` names (a memory-only one: its own, discarded) and
// builds every jobs-th key; with one job, or one key, this process builds them. `jobs` <= 0:
// one worker per hardware thread. The calling process must not have compiled with NVRTC yet.
ParallelBuildReport build_in_parallel(const CubinStore::Options& store_options, const Logger& log,
                                      const std::vector<KernelKey>& keys, int jobs,
                                      const BuildProgressFn& progress);

}  // namespace smla::tools
