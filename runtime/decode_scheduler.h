// Scheduling of one decode problem: whether a call runs one CTA per (row, head group) or splits
// every row into its segments (partials + combine kernel), the grids, and the workspace. Depends
// only on the problem's kernel shape and num_rows, never on device data, so a captured graph
// replays correctly when index tables and lengths change; and not on the device either, so the
// workspace size is a pure function of (problem, max_rows).
#pragma once

#include <cstddef>
#include <cstdint>

#include "codegen/kernel_key.h"

namespace smla {

struct DecodeLaunch {
  bool split = false;
  int64_t decode_blocks = 0;
  int64_t combine_blocks = 0;  // 0 when not split
  size_t workspace_bytes = 0;  // what this call needs
  size_t partial_ml_offset = 0;  // byte offset of the (max, sum) pairs inside the workspace
};

class DecodeScheduler {
 public:
  explicit DecodeScheduler(const KernelKey& decode_key);

  // NOTE: a row splits into its segments while rows * head_groups <= kSplitCtaLimit, i.e. while
  // whole-row CTAs would leave most of a 132-148 SM GPU idle. The limit also bounds the
  // workspace: at most kSplitCtaLimit * segments * heads_per_cta * 514 floats (<= 32 MiB for
  // every DSv4 preset).
  static constexpr int64_t kSplitCtaLimit = 48;

  DecodeLaunch plan(int num_rows) const;
  // The largest workspace any num_rows <= max_rows needs.
  size_t workspace_bytes(int max_rows) const;
  bool splits(int num_rows) const;
  int head_groups() const { return head_groups_; }
  const DecodeGeometry& geometry() const { return geometry_; }

 private:
  DecodeGeometry geometry_;
  int heads_ = 0;
  int heads_per_cta_ = 0;
  int head_groups_ = 0;
};

}  // namespace smla
