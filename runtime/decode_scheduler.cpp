#include "runtime/decode_scheduler.h"

#include <algorithm>

namespace smla {

DecodeScheduler::DecodeScheduler(const KernelKey& decode_key, const KernelKey* narrow_key,
                                 int narrow_max_rows)
    : geometry_(decode_key.geometry()),
      heads_(decode_key.heads),
      heads_per_cta_(decode_key.tile.heads_per_cta),
      head_groups_((decode_key.heads + heads_per_cta_ - 1) / heads_per_cta_) {
  max_split_rows_ = max_split_rows_for(heads_per_cta_, head_groups_);
  // The narrow kernel has the same segments (only its heads per CTA differ).
  if (narrow_key != nullptr && narrow_key->geometry().segments == geometry_.segments) {
    narrow_heads_per_cta_ = narrow_key->tile.heads_per_cta;
    narrow_head_groups_ = (heads_ + narrow_heads_per_cta_ - 1) / narrow_heads_per_cta_;
    narrow_rows_ = std::min<int64_t>(
        narrow_max_rows, max_split_rows_for(narrow_heads_per_cta_, narrow_head_groups_));
  }
}

int64_t DecodeScheduler::max_split_rows_for(int heads_per_cta, int head_groups) const {
  if (geometry_.segments < 2) return 0;
  const int64_t row_bytes = static_cast<int64_t>(geometry_.segments) * head_groups *
                            partial_item_floats(heads_per_cta) *
                            static_cast<int64_t>(sizeof(float));
  return std::min(kSplitCtaLimit / head_groups, kWorkspaceLimit / row_bytes);
}

DecodeLaunch DecodeScheduler::split_launch(int num_rows, int heads_per_cta, int head_groups) const {
  DecodeLaunch launch;
  launch.split = true;
  const int64_t items = static_cast<int64_t>(num_rows) * geometry_.segments * head_groups;
  launch.decode_blocks = items;
  launch.combine_blocks = static_cast<int64_t>(num_rows) * heads_;
  launch.partial_ml_offset = static_cast<size_t>(items) * heads_per_cta * kHeadDim * sizeof(float);
  launch.workspace_bytes = static_cast<size_t>(items) *
                           static_cast<size_t>(partial_item_floats(heads_per_cta)) * sizeof(float);
  return launch;
}

DecodeLaunch DecodeScheduler::plan(int num_rows) const {
  if (num_rows <= narrow_rows_) {
    DecodeLaunch launch = split_launch(num_rows, narrow_heads_per_cta_, narrow_head_groups_);
    launch.narrow = true;
    return launch;
  }
  if (num_rows <= max_split_rows_) return split_launch(num_rows, heads_per_cta_, head_groups_);
  DecodeLaunch launch;
  launch.decode_blocks = static_cast<int64_t>(num_rows) * head_groups_;
  return launch;
}

size_t DecodeScheduler::workspace_bytes(int max_rows) const {
  // The need grows with num_rows while calls split (over either kernel); the largest splitting
  // count of each is a bound.
  size_t bytes = 0;
  for (const int64_t limit : {max_split_rows_, narrow_rows_}) {
    const int64_t largest_split = std::min<int64_t>(max_rows, limit);
    if (largest_split >= 1) {
      bytes = std::max(bytes, plan(static_cast<int>(largest_split)).workspace_bytes);
    }
  }
  return bytes;
}

}  // namespace smla
