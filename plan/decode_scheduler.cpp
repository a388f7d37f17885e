#include "plan/decode_scheduler.h"

#include <algorithm>
#include <optional>

namespace smla {

DecodeScheduler::DecodeScheduler(const DecodeKernel& kernel, const std::vector<SplitTile>& narrow,
                                 const std::optional<TileConfig>& fast)
    : geometry_(kernel.geometry()),
      heads_(kernel.heads),
      heads_per_cta_(kernel.tile.heads_per_cta),
      wave_sms_(kernel.arch->wave_sms),
      wave_ctas_(wave_ctas(*kernel.arch, kernel.tile)),
      head_groups_(ceil_div(kernel.heads, heads_per_cta_)) {
  partial_tiles_ =
      static_cast<double>(partial_item_floats(heads_per_cta_) * sizeof(float)) /
      (static_cast<double>(kernel.tile.tile_entries) * geometry_.chunks_per_entry * 16);
  const int64_t split_cta_limit = kSplitCtaLimit * wave_sms_ / kMeasuredWaveSms;
  max_split_rows_ = std::min({split_cta_limit / head_groups_, wave_split_rows(),
                              max_fitting_rows(heads_per_cta_, head_groups_, geometry_.segments)});
  // A narrow split differs in its heads per CTA, and (batch-variant mode's few-row and wave
  // splits) in its segments. Its max_rows bound its grid already.
  int64_t last_split_rows = max_split_rows_;
  int64_t last_wave_rows = 0;  // the wave splits' (the entries with a lower row bound) largest
  for (const SplitTile& split : narrow) {
    DecodeKernel narrow_kernel = kernel;
    narrow_kernel.tile = split.tile;
    const int segments = narrow_kernel.geometry().segments;
    const int heads_per_cta = split.tile.heads_per_cta;
    const int head_groups = ceil_div(heads_, heads_per_cta);
    const int64_t max_rows =
        std::min<int64_t>(split.max_rows, max_fitting_rows(heads_per_cta, head_groups, segments));
    narrow_.push_back({heads_per_cta, head_groups, segments, max_rows, split.min_rows});
    if (max_rows < split.min_rows) continue;  // never runs
    last_split_rows = std::max(last_split_rows, max_rows);
    if (split.min_rows > 1) last_wave_rows = std::max(last_wave_rows, max_rows);
  }
  if (fast) {
    fast_head_groups_ = ceil_div(heads_, fast->heads_per_cta);
    // NOTE: the wgmma kernel's time is flat up to one wave, so past the wave splits it beats
    // the default split and ties whole rows (measured: docs/PERFORMANCE.md, "The heads-on-M
    // kernel, one CTA per SM").
    const int64_t wgmma_rows = ceil_div(kBatchVariantCtas, fast_head_groups_);
    fast_min_rows_ = fast->mma != MmaPath::kWgmma ? last_split_rows + 1
                     : last_wave_rows > 0         ? std::min(wgmma_rows, last_wave_rows + 1)
                                                  : wgmma_rows;
  }
  // Prefix items cut rows while two items a row fit the workspace: their choice is estimated
  // once per row count, here, not on each call.
  const int64_t last_prefix =
      geometry_.segments > 2 ? max_fitting_rows(heads_per_cta_, head_groups_, 2) : 0;
  prefix_by_rows_.assign(static_cast<size_t>(last_prefix) + 1, 0);
  for (int64_t rows = 1; rows <= last_prefix; ++rows) {
    prefix_by_rows_[rows] = estimate_prefix_segments(static_cast<int>(rows));
  }
  // NOTE: a split kernel's need grows with num_rows, but a row count below its bound may run
  // another kernel (batch-variant mode's wave splits take rows under the default's bound), so
  // every count up to the largest that splits is planned once, here (up to ~1000).
  int64_t last_split = std::max(max_split_rows_, last_prefix);
  for (const Narrow& n : narrow_) last_split = std::max(last_split, n.max_rows);
  workspace_up_to_.assign(static_cast<size_t>(last_split) + 1, 0);
  for (int64_t rows = 1; rows <= last_split; ++rows) {
    workspace_up_to_[rows] =
        std::max(workspace_up_to_[rows - 1], plan(static_cast<int>(rows)).workspace_bytes);
  }
}

int64_t DecodeScheduler::wave_split_rows() const {
  if (geometry_.segments < 2) return 0;
  const int64_t segment_tiles = ceil_div(geometry_.tiles, geometry_.segments);
  const int64_t waves = geometry_.tiles / (segment_tiles + kSplitOverheadTiles);
  return waves * wave_ctas_ / (static_cast<int64_t>(geometry_.segments) * head_groups_);
}

int64_t DecodeScheduler::max_fitting_rows(int heads_per_cta, int head_groups, int segments) const {
  if (segments < 2) return 0;
  const int64_t row_bytes = static_cast<int64_t>(segments) * head_groups *
                            partial_item_floats(heads_per_cta) *
                            static_cast<int64_t>(sizeof(float));
  return kWorkspaceLimit / row_bytes;
}

int DecodeScheduler::estimate_prefix_segments(int num_rows) const {
  const int segments = geometry_.segments;
  if (segments < 3) return 0;
  const int64_t tiles = geometry_.tiles;
  const int64_t segment_tiles = ceil_div(tiles, segments);
  const int64_t ctas = static_cast<int64_t>(num_rows) * head_groups_;
  const double other = static_cast<double>(segment_tiles + kSplitOverheadTiles) + partial_tiles_;
  double baseline = 0;
  if (num_rows <= max_split_rows_) {  // a plain split: its items' waves
    if (wave_ctas_ > wave_sms_) return 0;
    baseline = other * static_cast<double>(ceil_div(ctas * segments, wave_ctas_));
  } else {  // whole rows
    const double alone = wave_ctas_ > wave_sms_ && ctas <= wave_sms_ ? kAloneTileCost : 1.0;
    baseline = alone * static_cast<double>(ceil_div(ctas, wave_ctas_) * tiles);
  }
  double best = kPrefixGain * baseline;
  int best_segments = 0;
  for (int prefix = 2; prefix < segments; ++prefix) {
    const int items = segments - prefix + 1;
    if (num_rows > max_fitting_rows(heads_per_cta_, head_groups_, items)) continue;
    const double first =
        static_cast<double>(std::min(prefix * segment_tiles, tiles) + kSplitOverheadTiles) +
        partial_tiles_;
    const double spread = static_cast<double>(ctas) * (first + (items - 1) * other) / wave_ctas_;
    const double cost = std::max(static_cast<double>(ceil_div(ctas, wave_ctas_)) * first, spread);
    if (cost < best) best = cost, best_segments = prefix;
  }
  return best_segments;
}

DecodeLaunch DecodeScheduler::split_launch(int num_rows, int heads_per_cta, int head_groups,
                                           int row_items) const {
  DecodeLaunch launch;
  launch.split = true;
  const int64_t items = static_cast<int64_t>(num_rows) * row_items * head_groups;
  launch.decode_blocks = items;
  launch.combine_blocks = static_cast<int64_t>(num_rows) * heads_;
  launch.partial_ml_offset = static_cast<size_t>(items) * heads_per_cta * kHeadDim * sizeof(float);
  launch.workspace_bytes = static_cast<size_t>(items) *
                           static_cast<size_t>(partial_item_floats(heads_per_cta)) * sizeof(float);
  return launch;
}

DecodeLaunch DecodeScheduler::plan(int num_rows) const {
  if (fast_min_rows_ > 0 && num_rows >= fast_min_rows_) {
    DecodeLaunch launch;
    launch.fast = true;
    launch.decode_blocks = static_cast<int64_t>(num_rows) * fast_head_groups_;
    return launch;
  }
  for (size_t i = 0; i < narrow_.size(); ++i) {
    if (num_rows > narrow_[i].max_rows || num_rows < narrow_[i].min_rows) continue;
    DecodeLaunch launch = split_launch(num_rows, narrow_[i].heads_per_cta, narrow_[i].head_groups,
                                       narrow_[i].segments);
    launch.narrow = static_cast<int>(i);
    return launch;
  }
  if (num_rows < static_cast<int64_t>(prefix_by_rows_.size()) && prefix_by_rows_[num_rows] > 0) {
    const int prefix = prefix_by_rows_[num_rows];
    DecodeLaunch launch =
        split_launch(num_rows, heads_per_cta_, head_groups_, geometry_.segments - prefix + 1);
    launch.prefix_segments = prefix;
    launch.decode_grid_y = geometry_.segments - prefix + 1;
    return launch;
  }
  if (num_rows <= max_split_rows_) {
    return split_launch(num_rows, heads_per_cta_, head_groups_, geometry_.segments);
  }
  DecodeLaunch launch;
  launch.decode_blocks = static_cast<int64_t>(num_rows) * head_groups_;
  return launch;
}

size_t DecodeScheduler::workspace_bytes(int max_rows) const {
  if (max_rows < 1) return 0;
  return workspace_up_to_[std::min<size_t>(max_rows, workspace_up_to_.size() - 1)];
}

}  // namespace smla
