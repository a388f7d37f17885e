// The plan of one decode problem: the kernels smla_prepare loads, and for every row count which
// of them runs, with which grid, segments and workspace. Built once, at prepare, from the
// problem, the arch, the mode, the device's tuning rows and (for measuring) a forced tile; the
// one place that decides what a call runs. Launches index into it, `smla cache build` compiles
// the kernels of both modes' plans, `smla plan` prints it.
// A plan depends only on host-known values, never on device data (a captured graph replays
// correctly when index tables and lengths change), and its workspace is a pure function of
// (problem, arch, mode, max_rows): tuning rows never change it.
#pragma once

#include <smla.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autotune/tuning.h"
#include "codegen/kernel_key.h"
#include "plan/decode_scheduler.h"
#include "support/status.h"

namespace smla {

// What a plan is built for besides the problem and the arch.
struct PlanSettings {
  // A row's bits may depend on its call's size (smla_options.batch_variant): few-row and wave
  // splits with their own segments, and the fast path over whole rows.
  bool batch_variant = false;
  // Every call runs this tile, and no tuning row applies (SMLA_TILE: measuring a candidate).
  std::optional<TileConfig> forced_tile;
};

// Why a kernel is in the plan.
enum class KernelRole { kDefault, kNarrow, kFewRow, kWave, kFast, kTuned, kForced };
const char* kernel_role_name(KernelRole role);  // "default", "narrow", "few-row", ...

struct PlannedKernel {
  KernelRole role;
  DecodeKernel decode;
  std::optional<CombineKernel> combine;  // when the decode kernel has several segments
  int tuned_bucket = 0;                  // kTuned: the batch bucket of its tuning row
};

// One call: which kernel, and how it runs.
struct PlannedCall {
  int kernel = 0;  // an index into DecodePlan::kernels()
  DecodeLaunch launch;
};

// Consecutive row counts that run the same kernel the same way (whole rows, a split of all
// segments, or prefix items of `prefix_segments`).
struct RowRange {
  int first_rows = 1;
  int last_rows = 0;  // 0: every larger count too
  int kernel = 0;
  bool split = false;
  int prefix_segments = 1;
};

class DecodePlan {
 public:
  // `tuned`: the usable tuning rows of this device (find_tuned_tiles), by rising bucket; ignored
  // with a forced tile. INVALID_ARGUMENT when a forced tile cannot run this problem.
  static Status build(const ArchSpec& arch, const smla_problem& problem,
                      const PlanSettings& settings, const std::vector<TunedTile>& tuned,
                      std::unique_ptr<DecodePlan>* plan);

  const std::vector<PlannedKernel>& kernels() const { return kernels_; }
  // The call of `num_rows` rows given `workspace_bytes`: a tuned tile runs where its launch
  // needs no more workspace than the heuristic's largest for up to num_rows rows, nor than the
  // call passes; the heuristic schedule otherwise.
  PlannedCall call(int num_rows, size_t workspace_bytes) const;
  // The largest workspace a call of up to max_rows rows needs (the heuristic schedule's).
  size_t workspace_bytes(int max_rows) const { return heuristic_.workspace_bytes(max_rows); }
  // The calls of 1 .. max_rows rows with the workspace prepare returns for each, merged into
  // ranges; the last range has no end when the plan does not change past max_rows.
  std::vector<RowRange> row_ranges(int max_rows) const;

 private:
  DecodePlan(const DecodeKernel& main, const std::vector<SplitTile>& splits,
             const std::optional<TileConfig>& fast);

  std::vector<PlannedKernel> kernels_;
  DecodeScheduler heuristic_;
  int first_split_kernel_ = 1;  // the heuristic's split tiles follow the main kernel...
  int fast_kernel_ = -1;        // ...then its fast path, then the tuned tiles
  struct Tuned {
    int bucket;
    int kernel;
    DecodeScheduler schedule;  // the tuned tile alone
  };
  std::vector<Tuned> tuned_;
};

// The kernels a cache needs so that `problem` prepares on `arch` without compiling, in either
// mode (tuning rows aside): the union of both modes' plans, each kernel once, decode kernels
// each followed by its combine kernel.
std::vector<KernelKey> prewarm_kernels(const ArchSpec& arch, const smla_problem& problem);

}  // namespace smla
