// Scheduling of one decode problem: whether a call runs one CTA per (row, head group) or splits
// every row into its segments or into prefix items (partials + combine kernel), the grids, and
// the workspace. Depends only on the problem's kernel shapes and num_rows, never on device data,
// so a captured graph replays correctly when index tables and lengths change; and not on the
// device either, so the workspace size is a pure function of (problem, max_rows) and the
// kernels: of the context's arch and mode (on sm_90a, 128 heads take the wgmma kernel by
// default).
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
  int decode_grid_y = 1;  // prefix calls: the items of a row, the decode grid's y (work_item)
  int prefix_segments = 1;       // split: the segments of a row's first item (work_item)
  int64_t combine_blocks = 0;    // 0 when not split
  size_t workspace_bytes = 0;    // what this call needs
  size_t partial_ml_offset = 0;  // byte offset of the (max, sum) pairs inside the workspace
};

class DecodeScheduler {
 public:
  // `narrow`: the problem's narrow splits (plan/split_tiles.h), narrowest first (in
  // batch-variant mode the few-row split before them and the wave splits after them); a split
  // call runs the first whose row range it falls in (as far as its partials fit the limits
  // below), else `decode_key`'s kernel.
  // `fast`: the batch-variant fast path's tile (autotune/heuristics.h: fast_tile), if any. Calls of whole rows
  // run it: for the wgmma kernel those whose grid fills kBatchVariantCtas CTAs of it, for a
  // one-segment tile of the default kernel those that neither the default nor a narrow split
  // splits into segments (prefix items included).
  explicit DecodeScheduler(const DecodeKernel& kernel, const std::vector<SplitTile>& narrow = {},
                           const std::optional<TileConfig>& fast = std::nullopt);

  // NOTE: rows split into their segments while rows * head_groups <= kSplitCtaLimit, i.e. while
  // whole-row CTAs would leave much of a 132-148 SM GPU idle (at 64 rows of 16 heads, splitting
  // measured 1.5x faster on the H200), and while the split partials fit kWorkspaceLimit (the
  // narrow splits: their own row bounds and that). So the workspace is at most 32 MiB for any
  // problem.
  static constexpr int64_t kSplitCtaLimit = 96;
  static constexpr int64_t kMeasuredWaveSms = 132;  // on other waves the limit scales with it
  // NOTE: and while the split grid's waves (kWaveSms x the tile's CTAs per SM) stay within
  // tiles / (segment tiles + kSplitOverheadTiles): a split call takes about a wave's segment
  // plus ~2 tiles' time (its partials, the combine) per wave, whole rows their tiles' time
  // while they fit one wave. Measured on the H200 for the heads-on-M kernel (one CTA per SM,
  // 2-tile segments; docs/PERFORMANCE.md, "Where the default split ends"): 64 heads of
  // 128 + 512 entries split up to 26 rows (28 / 48 rows whole: 41.32 / 42.74 us against split
  // 43.32 / 64.18), 128 heads of 128 + 1024 up to 14 (split 63.04 against whole 67.45); for 32
  // heads it allows 58 rows, the workspace 56 (56 rows: split 68.38, whole 68.08). For the
  // entries-on-M kernels of 16 heads and fewer it is above kSplitCtaLimit's, measured there.
  static constexpr int64_t kSplitOverheadTiles = 2;
  // The wgmma fast path runs calls of at least this many 64-head CTAs: about where its one-wave
  // time (flat up to a wave) meets the mma.sync tiles' (128 heads from 32 rows, 64 heads from 64).
  static constexpr int kBatchVariantCtas = 64;
  static constexpr int64_t kWorkspaceLimit = 32ll << 20;
  // NOTE: calls past the split whose whole rows leave part of a wave idle cut each row
  // into a prefix item, its first P (2 .. segments - 1) segments folded in one CTA as whole rows
  // fold them, and an item for each later segment, where that is estimated 1 / kPrefixGain
  // faster (the combine kernel continues the fold, so a row's bits stay those of its whole-row
  // CTA). The estimate, in tiles: the prefix items' waves, or the grid's tiles spread over the
  // wave, whichever is longer, each item costing kSplitOverheadTiles and its partial (written
  // and read back about as fast as a tile's entries are gathered: as many tiles as its bytes
  // fill); whole rows their tiles per wave, kAloneTileCost of that where CTAs made for two per
  // SM run alone. Fitted to an A/B on an H100 (docs/PERFORMANCE.md, "Prefix items"): 1.03-1.26x
  // where chosen, but for 8 heads at 160 rows (0.96x); without the partials' cost it chose
  // prefix items at 128 rows of 16 heads (0.91x) and 40 rows of 128 heads (0.86x).
  // Split calls of kernels of one CTA per SM take prefix items the same way, the estimate
  // against their one-segment items' waves (a short last wave costs a whole one): 1.02-1.40x
  // where chosen (32, 64 and 128 heads, 8-56 rows; "Prefix items in split calls"). Kernels of
  // two CTAs per SM keep their splits: there the estimate chose prefix items that measured
  // 0.95-1.14x, its waves being no model of two CTAs sharing an SM.
  // kAloneTileCost: whole rows of the 16- and 8-head kernels at 128 rows (alone) against 256
  // rows (two per SM) on the H200: 63.03 / 87.60 and 30.82 / 40.97 us.
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
