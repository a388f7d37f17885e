// Scheduling of one decode kernel and its split tiles: whether a call runs one CTA per (row,
// head group) or splits every row into its segments or into prefix items (partials + the
// combine kernel), the grids, and the workspace. Depends only on the kernels and num_rows, never
// on device data (a captured graph replays correctly when index tables and lengths change), so
// the workspace is a pure function of (problem, arch, mode, max_rows). DecodePlan owns one per
// problem (and one per tuned tile).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "codegen/decode_family.h"
#include "plan/split_tiles.h"

namespace smla {

struct DecodeLaunch {
  bool split = false;
  bool fast = false;  // the batch-variant fast path's kernel runs (whole rows)
  int narrow = -1;    // the narrow split that runs (an index into the scheduler's), or -1
  int64_t decode_blocks = 0;
  int decode_grid_y = 1;       // prefix calls: the items of a row, the decode grid's y (work_item)
  int prefix_segments = 1;     // split: the segments of a row's first item (work_item)
  int64_t combine_blocks = 0;  // 0 when not split
  size_t workspace_bytes = 0;  // what this call needs
  size_t partial_ml_offset = 0;  // byte offset of the (max, sum) pairs inside the workspace
};

class DecodeScheduler {
 public:
  // `narrow`: the problem's split tiles (plan/split_tiles.h) in the order they are tried; a
  // split call runs the first whose row range it falls in (as far as its partials fit the
  // workspace limit), else `kernel`. `fast`: batch-variant mode's whole-row tile
  // (autotune/heuristics.h), if any: the wgmma kernel from kBatchVariantCtas CTAs, a one-segment
  // mma.sync tile where neither the default nor a split tile splits into segments.
  explicit DecodeScheduler(const DecodeKernel& kernel, const std::vector<SplitTile>& narrow = {},
                           const std::optional<TileConfig>& fast = std::nullopt);

  // Rows split into their segments while their whole-row CTAs would fill at most kSplitCtaLimit
  // of kMeasuredWaveSms SMs (scaled to the arch's wave), while the split grid's waves stay
  // within tiles / (segment tiles + kSplitOverheadTiles), and while the partials fit
  // kWorkspaceLimit, so the workspace is at most 32 MiB for any problem.
  // NOTE: a split call takes about a wave's segment plus ~2 tiles (its partials, the combine)
  // per wave; whole rows take their tiles while they fit one wave (measured on an H200:
  // docs/PERFORMANCE.md, "Where the default split ends").
  static constexpr int64_t kSplitCtaLimit = 96;
  static constexpr int64_t kMeasuredWaveSms = 132;
  static constexpr int64_t kSplitOverheadTiles = 2;
  static constexpr int64_t kWorkspaceLimit = 32ll << 20;
  // The wgmma fast path runs calls of at least this many 64-head CTAs: about where its one-wave
  // time meets the mma.sync tiles' (128 heads from 32 rows, 64 heads from 64).
  static constexpr int kBatchVariantCtas = 64;
  // Calls past the split whose whole rows leave part of a wave idle cut each row into prefix
  // items: the first P (2 .. segments - 1) segments folded in one CTA as whole rows fold them,
  // then an item per later segment; the combine kernel continues the fold, so the row keeps its
  // whole-row bits. They run where an estimate in tiles says they are 1 / kPrefixGain faster:
  // the items' waves or the grid's tiles spread over the wave, whichever is longer, each item
  // costing kSplitOverheadTiles plus its partial (as many tiles as its bytes fill), against
  // whole rows' tiles per wave (kAloneTileCost of that where CTAs made for two per SM run
  // alone). Split calls of one-CTA-per-SM kernels weigh them the same way against their
  // one-segment items' waves; two-CTA-per-SM kernels keep their splits.
  // NOTE: fitted to an H100 A/B (docs/PERFORMANCE.md, "Prefix items"): 1.02-1.40x where chosen,
  // one row count 0.96x; for two CTAs per SM the waves modelled nothing (0.95-1.14x).
  static constexpr double kPrefixGain = 0.9;
  static constexpr double kAloneTileCost = 0.72;

  DecodeLaunch plan(int num_rows) const;
  // The largest workspace any num_rows <= max_rows needs.
  size_t workspace_bytes(int max_rows) const;
  // Whether the call runs the combine kernel (split into segments or prefix items).
  bool splits(int num_rows) const { return plan(num_rows).split; }
  // The largest num_rows the default tile splits (into one-segment items, or prefix items where
  // the estimate prefers them); 0 for kernels of one segment.
  int64_t max_split_rows() const { return max_split_rows_; }
  int head_groups() const { return head_groups_; }
  // The last row count whose plan differs from a larger one's: past it, every call runs whole
  // rows of the same kernel.
  int64_t last_planned_rows() const {
    return std::max<int64_t>(static_cast<int64_t>(workspace_up_to_.size()) - 1, fast_min_rows_);
  }
  const DecodeGeometry& geometry() const { return geometry_; }

 private:
  DecodeLaunch split_launch(int num_rows, int heads_per_cta, int head_groups, int row_items) const;
  // The segments of the prefix items that cut `num_rows` rows (0: a plain split or whole rows
  // run), by the estimate above; plan() reads them from prefix_by_rows_.
  int estimate_prefix_segments(int num_rows) const;
  // The most rows whose split grid fits the waves above (0 for kernels of one segment).
  int64_t wave_split_rows() const;
  // The most rows whose split partials fit kWorkspaceLimit (0 for kernels of one segment).
  int64_t max_fitting_rows(int heads_per_cta, int head_groups, int segments) const;

  DecodeGeometry geometry_;
  int heads_ = 0;
  int heads_per_cta_ = 0;
  int64_t wave_sms_ = 0;      // the arch's (ArchSpec::wave_sms)
  int64_t wave_ctas_ = 0;     // the default tile's wave
  double partial_tiles_ = 0;  // an item's partial in tiles of gathered entries (prefix items)
  int head_groups_ = 0;
  int64_t max_split_rows_ = 0;
  int fast_head_groups_ = 0;
  int64_t fast_min_rows_ = 0;  // calls of at least this many rows run the fast path (0: none)
  struct Narrow {
    int heads_per_cta;
    int head_groups;
    int segments;
    int64_t max_rows;  // calls of at most this many rows split over it...
    int64_t min_rows;  // ...and of at least this many
  };
  std::vector<Narrow> narrow_;
  std::vector<size_t> workspace_up_to_;  // [n]: the most any call of <= n rows needs
  std::vector<int> prefix_by_rows_;      // [n]: estimate_prefix_segments(n), up to two items' rows
};

}  // namespace smla
