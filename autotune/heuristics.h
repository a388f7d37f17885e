// The heuristic tile configuration of a decode problem, used until `smla tune` has measured a
// better one. It depends on the problem and the arch only, never on the batch size, because the
// tile and segment shape decide the floating-point order of a row's reduction: a row gives the
// same bits whatever else is in the batch.
#pragma once

#include <smla.h>

#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel_key.h"
#include "codegen/tile_config.h"

namespace smla {

// The default mode's tile on `arch`: on sm_90a 128 heads on an fp8 layout take the wgmma kernel
// (in segments). "" gives the mma.sync tile every arch can run, which batch-variant mode's
// schedule (its narrow, few-row and wave splits below its fast path) is built on.
TileConfig default_tile_config(const std::string& arch, const smla_problem& problem);

// The kernels of a problem's few-row split calls, narrowest first: `tile` with fewer heads per
// CTA (8, 16; the heads-on-M kernel takes 16 only), so a row's segments spread over more CTAs.
// Both decode kernels give a head the same bits at every width of one tile, so rows keep their
// bits whichever runs.
struct NarrowSplit {
  TileConfig tile;
  int max_rows;      // calls of at most this many rows may use it...
  int min_rows = 1;  // ...and of at least this many
};
// A narrow split serves the calls whose grid fits this many CTAs: one wave of a 132-SM H200.
constexpr int kNarrowSplitCtas = 128;
std::vector<NarrowSplit> narrow_splits(const smla_problem& problem, const TileConfig& tile);

// Batch-variant mode's few-row split (smla_options.batch_variant = 1): calls whose rows fit
// kFewRowCtas CTAs split every row into segments of as few tiles as keep a row within
// kFewRowSegments segments (one tile for CSA rows), over 8-head CTAs of the entries-on-M
// kernel, folded by the combine kernel (one batch of loads for up to 40 segments): each CTA's
// chain is as short as the combine kernel allows. Its segments are not the default tile's, so
// a row's bits differ from those of larger calls.
// NOTE (measured on the H200, docs/PERFORMANCE.md, "Batch-variant mode: few rows"): faster than
// the default narrow splits wherever its grid fits one wave of two CTAs per SM (264 CTAs on 132
// SMs), slower past it (one round with the bound at 600): 16 heads, 128 + 1024 (72 CTAs a row),
// rows 1 / 3 / 4: 7.82 / 9.01 / 12.50 us against 10.00 / 10.31 / 10.41; 64 heads, 128 + 512
// (160 a row), rows 1 / 2: 7.50 / 11.92 against 11.14 / 11.81. HCA at 1M context, 16 heads
// (segments of 7 tiles, 76 CTAs a row): one row 15.43 against 41.61.
std::optional<NarrowSplit> few_row_split(const smla_problem& problem);
constexpr int kWaveSms = 132;  // an H200's SMs: a grid of one CTA (per slot) on each is a wave
// The CTAs of one wave of `tile`'s kernel: one on each slot (its CTAs per SM) of every SM.
constexpr int wave_ctas(const TileConfig& tile) { return kWaveSms * tile.min_blocks_per_sm; }
constexpr int kFewRowCtas = 2 * kWaveSms;
constexpr int kFewRowSegments = 40;

// Batch-variant mode's splits between few rows and whole rows: where the default tile's split
// grid (rows x segments x head groups) would pass one wave (kWaveSms x the tile's CTAs per SM),
// the default tile with fewer, longer segments (balanced: ceil(tiles / n) tiles for n
// segments), the most segments whose grid still fits the wave; in order of falling segment
// counts, each serving the rows between the previous one's bound and its own. Only for default
// tiles of the 128-entry segments of CSA-sized rows. Their segments are not the default's, so a
// row's bits differ from those of other calls.
// NOTE (measured on the H200, docs/PERFORMANCE.md, "Batch-variant mode: wave splits"): with
// the segment lengths forced, the most segments that fit one wave was the fastest, or within
// 1% of it, at every row count measured: 16 heads, 128 + 1024 entries, rows 24-96 (64 rows
// 31.98 against the default's 40.09 us; 88 rows 33.28 against 47.63); 8 heads, 128 + 512,
// rows 32-96 (64 rows 17.44 against 20.99); 32 heads (heads-on-M kernel, one CTA per SM),
// 128 + 1024, rows 8-96 (32 rows 30.35 against 46.24). HCA rows at 1M context (default
// segments of 33 tiles) were slower with them at 34 and 89-96 rows (2 segments of 130 tiles
// at 96 rows: 248.6 against 206.0), so wider rows keep the default split.
std::vector<NarrowSplit> wave_splits(const smla_problem& problem);

// The batch-variant fast path (smla_options.batch_variant = 1): the tile that calls of many
// rows may run instead of the default on `arch`, whole rows:
// - on sm_90a, for problems of a multiple of 64 heads on an fp8 layout, the wgmma kernel (64
//   heads per CTA), over whole rows. A call runs it when its grid (rows x 64-head groups) has at
//   least kBatchVariantCtas CTAs: about where its one-wave time (flat up to 132 CTAs on an H200)
//   meets the mma.sync tiles' (measured: 128 heads from 32 rows, 64 heads from 64 rows;
//   docs/PERFORMANCE.md, "Batch-variant mode"), or earlier, right past the wave splits, where
//   those end first (64 heads of CSA rows from 34 rows, 128 heads from 17). Below it the
//   mode runs the mma.sync tile's splits (default_tile_config(""));
// - else, for rows the default cuts into 128-entry segments, the default tile with one segment
//   a row: no folds. A call runs it where no split runs (past the wave splits).
//   NOTE (measured on the H200, docs/PERFORMANCE.md, "Batch-variant mode: whole rows in one
//   segment"): 16 heads, 128 + 1024, 256 rows 76.34 against 88.10 us; 8 heads, 128 + 512:
//   38.11 against 41.21; 32 heads: 117.58 against 136.41. HCA rows, whose default has ~8 long
//   segments, gained nothing (497.91 against 497.77).
std::optional<TileConfig> batch_variant_tile(const std::string& arch, const smla_problem& problem);
constexpr int kBatchVariantCtas = 64;

// The kernels smla_prepare loads for `problem` on `arch` without a forced tile, in either mode
// (so a prewarmed cache serves both): each mode's default tile and its narrow splits,
// batch-variant mode's few-row split, wave splits and fast path, and the combine kernel of each
// that has segments; each once.
std::vector<KernelKey> default_problem_kernels(const std::string& arch,
                                               const smla_problem& problem);

}  // namespace smla
