// Provides the cubin of a KernelKey: from the cache (system, then user), or compiled with NVRTC
// when the JIT is allowed, at most once across processes (the cache's leases). Shared by
// contexts and by `smla cache build`.
#pragma once

#include <cstdint>
#include <vector>

#include "cache/cubin_store.h"
#include "codegen/kernel_key.h"
#include "support/log.h"
#include "support/status.h"

namespace smla {

struct BuildResult {
  std::vector<uint8_t> cubin;
  bool compiled = false;  // this call ran NVRTC
  double compile_ms = 0;  // when compiled
};

class KernelBuilder {
 public:
  KernelBuilder(CubinStore& store, const Logger& log) : store_(store), log_(log) {}

  // allow_compile = false: a kernel not in the cache is SMLA_ERR_NOT_READY.
  Status build(const KernelKey& key, bool allow_compile, BuildResult* result) const;

 private:
  CubinStore& store_;
  const Logger& log_;
};

}  // namespace smla
