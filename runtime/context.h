// A context: one device (or none), one kernel cache, the kernels loaded for the problems it
// has prepared, and the policy (JIT, logging) of the host that created it.
#pragma once

#include <cuda.h>
#include <smla.h>

#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/cubin_store.h"
#include "plan/decode_plan.h"
#include "runtime/context_settings.h"
#include "runtime/cuda_driver.h"
#include "runtime/device_info.h"
#include "runtime/kernel_builder.h"
#include "support/log.h"
#include "support/status.h"

namespace smla {

// A problem with its fields normalized (unused sources cleared), usable as a map key.
struct ProblemKey {
  int fields[14];
  bool operator==(const ProblemKey& other) const;
};
struct ProblemKeyHash {
  size_t operator()(const ProblemKey& key) const;
};
ProblemKey problem_key(const smla_problem& problem);

class Context {
 public:
  static Status create(const ContextSettings& settings, std::unique_ptr<Context>* context);
  // With `options` (NULL: the defaults) and the environment (context_settings), as
  // smla_context_create makes one.
  static Status create(const smla_options* options, std::unique_ptr<Context>* context);
  ~Context();

  Status prepare(const smla_problem& problem, int max_rows, size_t* workspace_bytes);
  // `varlen` may be NULL when every source is a list.
  Status decode(const smla_problem& problem, const smla_args& args, const smla_varlen* varlen,
                void* workspace, size_t workspace_bytes, CUstream stream);

  // The plan of a prepared problem (nullptr: not prepared): tools label benchmark rows with what
  // a call runs, tests check that tuning rows are used.
  const DecodePlan* plan(const smla_problem& problem) const;

  bool has_device() const { return driver_ != nullptr; }
  const DeviceInfo& device() const { return device_; }
  const ArchSpec* arch() const { return arch_; }  // the arch kernels are built for

 private:
  struct LoadedKernel {
    CUmodule module = nullptr;
    CUfunction function = nullptr;
    CUfunction prefix_function = nullptr;  // a combine kernel's for prefix calls
    int threads = 0;
    int smem_bytes = 0;
  };
  struct KernelPair {
    LoadedKernel decode;
    LoadedKernel combine;  // loaded when the decode kernel can split
  };
  struct Prepared {
    std::unique_ptr<DecodePlan> plan;
    std::vector<KernelPair> kernels;  // the plan's, in its order
  };

  Context() = default;
  Status open_device(int ordinal);
  Status prepare_locked(const smla_problem& problem, bool allow_compile, const Prepared** result);
  // The loads and unloads below run with the device's context current (prepare_locked makes it
  // so; the destructor for unload).
  Status load_kernel(const KernelKey& key, bool allow_compile, LoadedKernel* kernel);
  // Raises the context's stack limit to what `function` (of `key`) needs a thread, if lower.
  Status reserve_local_memory(const KernelKey& key, CUfunction function);
  // A planned decode kernel and, when it splits, its combine kernel.
  Status load_pair(const PlannedKernel& kernel, bool allow_compile, KernelPair* pair);
  void unload(KernelPair* pair);
  void unload(Prepared* prepared);
  // The tuning rows of this device for `problem` whose kernels load (a row whose kernel does not
  // is skipped with a warning: the heuristic serves its bucket).
  std::vector<TunedTile> loadable_tuned_tiles(const smla_problem& problem, bool allow_compile);
  Status launch(const Prepared& prepared, const smla_problem& problem, const smla_args& args,
                const smla_varlen* varlen, void* workspace, size_t workspace_bytes,
                CUstream stream);
  const Prepared* find_prepared(const smla_problem& problem) const;

  Logger log_;
  std::unique_ptr<CubinStore> store_;
  std::unique_ptr<KernelBuilder> builder_;
  ContextSettings settings_;
  const CudaDriver* driver_ = nullptr;
  CUdevice cu_device_ = 0;
  CUcontext cu_context_ = nullptr;
  DeviceInfo device_;
  const ArchSpec* arch_ = nullptr;

  mutable std::shared_mutex prepared_mutex_;  // readers: every decode call; writers: prepare
  std::mutex prepare_mutex_;                  // one preparation at a time
  std::unordered_map<ProblemKey, std::unique_ptr<Prepared>, ProblemKeyHash> prepared_;
};

// The Context behind a C API handle (null for null), and a handle for a context made from
// `settings` (tools that pick what their contexts run), for the tools and tests built with the
// library; hosts see only smla.h.
Context* context_of(smla_context* ctx);
Status create_context_handle(const ContextSettings& settings, smla_context** ctx);

}  // namespace smla
