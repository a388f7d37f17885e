#include "plan/decode_plan.h"

#include <algorithm>

#include "autotune/heuristics.h"

namespace smla {
namespace {

PlannedKernel planned(KernelRole role, const DecodeKernel& decode) {
  PlannedKernel kernel{role, decode, std::nullopt};
  if (decode.geometry().segments > 1) kernel.combine = decode.combine();
  return kernel;
}

// The heuristic's split tiles in the order the scheduler tries them, with their roles: in
// batch-variant mode the few-row split first and the wave splits last.
struct Splits {
  std::vector<SplitTile> tiles;
  std::vector<KernelRole> roles;
  void add(const SplitTile& split, KernelRole role) {
    tiles.push_back(split);
    roles.push_back(role);
  }
};

}  // namespace

const char* kernel_role_name(KernelRole role) {
  switch (role) {
    case KernelRole::kDefault:
      return "default";
    case KernelRole::kNarrow:
      return "narrow";
    case KernelRole::kFewRow:
      return "few-row";
    case KernelRole::kWave:
      return "wave";
    case KernelRole::kFast:
      return "fast";
    case KernelRole::kTuned:
      return "tuned";
    case KernelRole::kForced:
      return "forced";
  }
  return "?";
}

DecodePlan::DecodePlan(const DecodeKernel& main, const std::vector<SplitTile>& splits,
                       const std::optional<TileConfig>& fast)
    : heuristic_(main, splits, fast) {}

Status DecodePlan::build(const ArchSpec& arch, const smla_problem& problem,
                         const PlanSettings& settings, const std::vector<TunedTile>& tuned,
                         std::unique_ptr<DecodePlan>* plan) {
  if (settings.forced_tile) {
    const DecodeKernel forced = DecodeKernel::of(arch, problem, *settings.forced_tile);
    const std::string unsupported = forced.unsupported();
    if (!unsupported.empty()) {
      return error(SMLA_ERR_INVALID_ARGUMENT, "SMLA_TILE: tile {}: {}",
                   settings.forced_tile->text(), unsupported);
    }
    plan->reset(new DecodePlan(forced, {}, std::nullopt));
    (*plan)->kernels_.push_back(planned(KernelRole::kForced, forced));
    return ok_status();
  }
  // Batch-variant mode's schedule is the mma.sync tile's, with the fast path above it: at few
  // rows its splits beat the wgmma kernel's segments.
  const TileConfig tile =
      settings.batch_variant ? mma_sync_tile(arch, problem) : default_tile(arch, problem);
  const DecodeKernel main = DecodeKernel::of(arch, problem, tile);
  Splits splits;
  if (settings.batch_variant) {
    if (const std::optional<SplitTile> few = few_row_split(arch, problem)) {
      splits.add(*few, KernelRole::kFewRow);
    }
  }
  for (const SplitTile& narrow : narrow_splits(arch, problem, tile)) {
    splits.add(narrow, KernelRole::kNarrow);
  }
  std::optional<TileConfig> fast;
  if (settings.batch_variant) {
    for (const SplitTile& wave : wave_splits(arch, problem)) splits.add(wave, KernelRole::kWave);
    fast = fast_tile(arch, problem);
  }
  std::unique_ptr<DecodePlan> built(new DecodePlan(main, splits.tiles, fast));
  built->kernels_.push_back(planned(KernelRole::kDefault, main));
  for (size_t i = 0; i < splits.tiles.size(); ++i) {
    built->kernels_.push_back(
        planned(splits.roles[i], DecodeKernel::of(arch, problem, splits.tiles[i].tile)));
  }
  if (fast) {
    built->fast_kernel_ = static_cast<int>(built->kernels_.size());
    built->kernels_.push_back(planned(KernelRole::kFast, DecodeKernel::of(arch, problem, *fast)));
  }
  for (const TunedTile& t : tuned) {
    const DecodeKernel kernel = DecodeKernel::of(arch, problem, t.tile);
    built->tuned_.push_back(
        {t.bucket, static_cast<int>(built->kernels_.size()), DecodeScheduler(kernel)});
    built->kernels_.push_back(planned(KernelRole::kTuned, kernel));
    built->kernels_.back().tuned_bucket = t.bucket;
  }
  *plan = std::move(built);
  return ok_status();
}

PlannedCall DecodePlan::call(int num_rows, size_t workspace_bytes) const {
  const int bucket = batch_bucket(num_rows);
  for (const Tuned& t : tuned_) {
    if (t.bucket != bucket) continue;
    const DecodeLaunch launch = t.schedule.plan(num_rows);
    const size_t fits = std::min(heuristic_.workspace_bytes(num_rows), workspace_bytes);
    if (launch.workspace_bytes <= fits) return {t.kernel, launch};
    break;
  }
  const DecodeLaunch launch = heuristic_.plan(num_rows);
  const int kernel = launch.fast          ? fast_kernel_
                     : launch.narrow >= 0 ? first_split_kernel_ + launch.narrow
                                          : 0;
  return {kernel, launch};
}

std::vector<RowRange> DecodePlan::row_ranges(int max_rows) const {
  // Past the heuristic's last split and the tuned buckets, every call runs alike.
  int64_t settled = heuristic_.last_planned_rows() + 1;
  for (const Tuned& t : tuned_) {
    settled = std::max<int64_t>(settled, bucket_last_rows(t.bucket, t.bucket) + 1);
  }
  std::vector<RowRange> ranges;
  for (int rows = 1; rows <= max_rows; ++rows) {
    const PlannedCall c = call(rows, workspace_bytes(rows));
    const RowRange range{rows, rows, c.kernel, c.launch.split, c.launch.prefix_segments};
    RowRange* last = ranges.empty() ? nullptr : &ranges.back();
    if (last && last->kernel == range.kernel && last->split == range.split &&
        last->prefix_segments == range.prefix_segments) {
      last->last_rows = rows;
    } else {
      ranges.push_back(range);
    }
    if (rows >= settled) break;
  }
  if (!ranges.empty() && ranges.back().last_rows >= settled) ranges.back().last_rows = 0;
  return ranges;
}

std::vector<KernelKey> prewarm_kernels(const ArchSpec& arch, const smla_problem& problem) {
  std::vector<KernelKey> keys;
  std::vector<std::string> texts;
  const auto add = [&](const KernelKey& key) {
    std::string text = key.text();
    if (std::find(texts.begin(), texts.end(), text) != texts.end()) return;
    texts.push_back(std::move(text));
    keys.push_back(key);
  };
  for (const bool batch_variant : {false, true}) {
    std::unique_ptr<DecodePlan> plan;
    PlanSettings settings;
    settings.batch_variant = batch_variant;
    if (!DecodePlan::build(arch, problem, settings, {}, &plan)) continue;  // only forced tiles fail
    for (const PlannedKernel& kernel : plan->kernels()) {
      add(kernel.decode);
      if (kernel.combine) add(*kernel.combine);
    }
  }
  return keys;
}

}  // namespace smla
