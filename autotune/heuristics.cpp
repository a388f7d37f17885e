#include "autotune/heuristics.h"

#include <algorithm>

#include "codegen/decode_family.h"

namespace smla {
namespace {

// A row's tiles, each source's rounded up (as the kernels walk them).
int row_tiles(const smla_problem& problem, int tile_entries) {
  int tiles = 0;
  for (int s = 0; s < problem.num_sources; ++s) {
    tiles += ceil_div(problem.sources[s].width, tile_entries);
  }
  return tiles;
}

// A row's entries in whole tiles of its total width (how the mma.sync default sizes segments).
int width_tiles(const smla_problem& problem, int tile_entries) {
  int width = 0;
  for (int s = 0; s < problem.num_sources; ++s) width += problem.sources[s].width;
  return ceil_div(width, tile_entries);
}

// The wgmma kernel's default segment (64-entry tiles).
constexpr int kWgmmaSegmentTiles = 3;

// The wgmma kernel's tile: 64 heads per CTA, two warpgroups over 64-entry tiles, two stages.
TileConfig wgmma_tile(int segment_tiles) {
  TileConfig tile;
  tile.heads_per_cta = 64;
  tile.warps = 8;
  tile.tile_entries = 64;
  tile.stages = 2;
  tile.min_blocks_per_sm = 1;
  tile.mma = MmaPath::kWgmma;
  tile.segment_tiles = segment_tiles;
  return tile;
}

bool takes_wgmma(const ArchSpec& arch, const smla_problem& problem) {
  return arch.wgmma && problem.num_heads % 64 == 0 && problem.kv_layout != SMLA_KV_BF16;
}

// The default's segments: `small` tiles for CSA-sized rows, so that a 1-row call spreads over
// several CTAs; wider rows (HCA at long context) about 8 segments, so that split partials stay
// a small share of the bytes.
int default_segment_tiles(int tiles, int small) {
  return tiles <= 12 * small ? small : (tiles + 7) / 8;
}

// The entries-on-M tile: 8 warps over 32-entry tiles (2 entry blocks x 4 parts of the dims),
// two stages, two CTAs per SM.
TileConfig entries_on_m_tile(int heads_per_cta) {
  TileConfig tile;
  tile.heads_per_cta = heads_per_cta;
  tile.warps = 8;
  tile.tile_entries = 32;
  tile.stages = 2;
  tile.min_blocks_per_sm = 2;
  return tile;
}

bool fits(const ArchSpec& arch, const smla_problem& problem, const TileConfig& tile) {
  return DecodeKernel::of(arch, problem, tile).unsupported().empty();
}

}  // namespace

TileConfig fitted_occupancy(const ArchSpec& arch, const smla_problem& problem, TileConfig tile) {
  while (tile.min_blocks_per_sm > 1 && !fits(arch, problem, tile)) --tile.min_blocks_per_sm;
  return tile;
}

TileConfig mma_sync_tile(const ArchSpec& arch, const smla_problem& problem) {
  // NOTE (measured on the H200): up to 16 heads, two CTAs of 8 warps over 32-entry tiles per SM
  // interleave their barriers and latencies: 1.24x faster than one CTA of 16 warps over
  // 64-entry tiles. More heads run the heads-on-M kernel, 32 heads per CTA over 64-entry tiles,
  // one CTA per SM: 1.28x faster than 32-head entries-on-M CTAs at 64 and 128 heads, slower at
  // 8 and 16.
  TileConfig config = entries_on_m_tile(problem.num_heads <= 8 ? 8 : 16);
  if (problem.num_heads > 16) {
    config.heads_per_cta = 32;
    config.tile_entries = 64;
    config.min_blocks_per_sm = 1;
    config.mma = MmaPath::kMmaSyncHeadsM;
  }
  const auto with_segments = [&](TileConfig tile) {
    tile.segment_tiles = default_segment_tiles(width_tiles(problem, tile.tile_entries),
                                               kSegmentEntries / tile.tile_entries);
    return fitted_occupancy(arch, problem, tile);
  };
  config = with_segments(config);
  if (config.mma == MmaPath::kMmaSyncHeadsM && !fits(arch, problem, config)) {
    // The consumer parts' 99 KB per CTA hold no heads-on-M tile: 16-head entries-on-M CTAs.
    config = with_segments(entries_on_m_tile(16));
  }
  return config;
}

TileConfig default_tile(const ArchSpec& arch, const smla_problem& problem) {
  // NOTE (measured on an H100): at 128 heads the wgmma kernel in 3-tile segments, its whole-row
  // calls folding them in local memory, is 1.5x the heads-on-M kernel from 64 rows (128 + 1024
  // entries, 256 rows: 331.8 against 511.8 us) but slower for one row (23.2 against ~12) and
  // from 22 to ~33 rows. At 64 heads the heads-on-M kernel stays: it was faster at every row
  // count up to 64.
  if (takes_wgmma(arch, problem) && problem.num_heads >= 128) {
    // A row of one segment names it by its length, as batch-variant mode's whole rows do.
    const int tiles = row_tiles(problem, 64);
    return wgmma_tile(std::min(tiles, default_segment_tiles(tiles, kWgmmaSegmentTiles)));
  }
  return mma_sync_tile(arch, problem);
}

std::optional<TileConfig> fast_tile(const ArchSpec& arch, const smla_problem& problem) {
  // NOTE (measured on the H200): the wgmma kernel over whole rows was 1.75-1.9x the mma.sync
  // tiles from 64 rows at 128 heads and from 96 rows at 64 heads. Whole rows in one segment of
  // the mma.sync tile, past the splits: 16 heads, 128 + 1024, 256 rows 76.3 against 88.1 us;
  // HCA rows (about 8 long segments) gained nothing.
  if (takes_wgmma(arch, problem)) return wgmma_tile(row_tiles(problem, 64));  // whole rows
  TileConfig tile = mma_sync_tile(arch, problem);
  const int tiles = row_tiles(problem, tile.tile_entries);
  if (ceil_div(tiles, tile.segment_tiles) < 2 ||
      tile.segment_tiles * tile.tile_entries != kSegmentEntries) {
    return std::nullopt;
  }
  tile.segment_tiles = tiles;
  return tile;
}

}  // namespace smla
