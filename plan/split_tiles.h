// The tiles that serve a decode problem's calls of few rows, and the row range each serves: a
// call whose whole rows would leave most of the GPU idle cuts each row into segments that run
// in parallel (partials + the combine kernel). Narrow splits keep the row's bits (they differ
// from the default tile only in heads per CTA); batch-variant mode's few-row and wave splits
// cut the row into other segments, so a row's bits depend on its call's size there.
#pragma once

#include <smla.h>

#include <optional>
#include <vector>

#include "codegen/arch.h"
#include "codegen/tile_config.h"

namespace smla {

struct SplitTile {
  TileConfig tile;
  int max_rows;      // calls of at most this many rows may run it...
  int min_rows = 1;  // ...and of at least this many
};

// One wave of a tile's kernel: one CTA on each of its slots (CTAs per SM) of every SM.
inline int wave_ctas(const ArchSpec& arch, const TileConfig& tile) {
  return arch.wave_sms * tile.min_blocks_per_sm;
}

// The narrow splits of `tile`, narrowest first: `tile` with fewer heads per CTA (8, 16; the
// heads-on-M kernel takes 16 only), for calls whose grid fits one wave with a few SMs to spare
// (128 CTAs on a 132-SM GPU). Both mma.sync kernels give a head the same bits at every width of
// one tile, so rows keep their bits whichever runs.
// NOTE (measured on the H200): 16 heads, 128 + 1024 entries over 8-head CTAs: 1 / 7 rows 12.16 /
// 12.68 -> 10.59 / 11.53 us; 32 heads: 1 row 16.94 -> 9.54 (8 heads per CTA); 128 heads: 1 row
// 17.47 -> 11.93 (16). Past one wave they are slower (32 heads, 8 rows: 18.52 -> 20.51).
std::vector<SplitTile> narrow_splits(const ArchSpec& arch, const smla_problem& problem,
                                     const TileConfig& tile);

// Batch-variant mode's few-row split: calls whose rows fit two waves of CTAs split every row
// into as few tiles a segment as keep it within kFewRowSegments segments (one tile for CSA rows),
// over 8-head entries-on-M CTAs, so each CTA's chain is as short as the combine kernel allows.
// NOTE (measured on the H200): 16 heads, 128 + 1024, rows 1 / 3 / 4: 7.82 / 9.01 / 12.50 us
// against the narrow splits' 10.00 / 10.31 / 10.41; HCA at 1M context, one row 15.43 against
// 41.61; slower past two waves.
std::optional<SplitTile> few_row_split(const ArchSpec& arch, const smla_problem& problem);
constexpr int kFewRowSegments = 40;  // one batch of the combine kernel's loads

// Batch-variant mode's splits between few rows and whole rows: where the default tile's split
// grid would pass one wave, the mma.sync tile with fewer, longer (balanced) segments: the most
// whose grid still fits the wave, by falling segment counts, each serving the rows between the
// previous one's bound and its own. Only for rows of 128-entry segments (CSA-sized).
// NOTE (measured on the H200): the most segments that fit one wave was the fastest, or within
// 1%, at every row count measured (16 heads, 128 + 1024, 64 rows: 31.98 against the default's
// 40.09 us); HCA rows at 1M context were slower with them, so wider rows keep the default split.
std::vector<SplitTile> wave_splits(const ArchSpec& arch, const smla_problem& problem);

}  // namespace smla
