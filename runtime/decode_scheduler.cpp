#include "runtime/decode_scheduler.h"

#include <algorithm>

namespace smla {

DecodeScheduler::DecodeScheduler(const KernelKey& decode_key)
    : geometry_(decode_key.geometry()),
      heads_(decode_key.heads),
      heads_per_cta_(decode_key.tile.heads_per_cta),
      head_groups_((decode_key.heads + decode_key.tile.heads_per_cta - 1) /
                   decode_key.tile.heads_per_cta) {
  if (geometry_.segments > 1) {
    const int64_t row_bytes = static_cast<int64_t>(geometry_.segments) * head_groups_ *
                              partial_item_floats(heads_per_cta_) *
                              static_cast<int64_t>(sizeof(float));
    max_split_rows_ = std::min(kSplitCtaLimit / head_groups_, kWorkspaceLimit / row_bytes);
  }
}

DecodeLaunch DecodeScheduler::plan(int num_rows) const {
  DecodeLaunch launch;
  launch.split = splits(num_rows);
  const int64_t rows = num_rows;
  if (!launch.split) {
    launch.decode_blocks = rows * head_groups_;
    return launch;
  }
  const int64_t items = rows * geometry_.segments * head_groups_;
  launch.decode_blocks = items;
  launch.combine_blocks = rows * heads_;
  launch.partial_ml_offset = static_cast<size_t>(items) * heads_per_cta_ * kHeadDim * sizeof(float);
  launch.workspace_bytes = static_cast<size_t>(items) *
                           static_cast<size_t>(partial_item_floats(heads_per_cta_)) * sizeof(float);
  return launch;
}

size_t DecodeScheduler::workspace_bytes(int max_rows) const {
  // The need grows with num_rows while calls split; the largest splitting count is the bound.
  const int64_t largest_split = std::min<int64_t>(max_rows, max_split_rows_);
  if (largest_split < 1) return 0;
  return plan(static_cast<int>(largest_split)).workspace_bytes;
}

}  // namespace smla
