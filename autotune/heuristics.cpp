#include "autotune/heuristics.h"

#include <algorithm>

#include "codegen/kernel_key.h"

namespace smla {
namespace {

int total_width(const smla_problem& problem) {
  int width = 0;
  for (int s = 0; s < problem.num_sources; ++s) width += problem.sources[s].width;
  return width;
}

// A row's tiles, each source's rounded up (as the kernels walk them).
int row_tiles(const smla_problem& problem, int tile_entries) {
  int tiles = 0;
  for (int s = 0; s < problem.num_sources; ++s) {
    tiles += ceil_div(problem.sources[s].width, tile_entries);
  }
  return tiles;
}

// The default segment of CSA-sized rows.
constexpr int kSegmentEntries = 128;
// The wgmma kernel's default segment (64-entry tiles), see default_tile_config.
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

// On sm_90a, multiples of 64 heads on an fp8 layout can run the wgmma kernel.
bool takes_wgmma(const std::string& arch, const smla_problem& problem) {
  return arch == "sm_90a" && problem.num_heads % 64 == 0 && problem.kv_layout != SMLA_KV_BF16;
}

// The default's segments: `small` tiles for CSA-sized rows, so that a 1-row call spreads over
// several CTAs; wider rows (HCA at long context) about 8 segments, so that split partials stay
// a small share of the bytes.
int default_segment_tiles(int tiles, int small) {
  return tiles <= 12 * small ? small : (tiles + 7) / 8;
}

}  // namespace

TileConfig default_tile_config(const std::string& arch, const smla_problem& problem) {
  // NOTE (measured on an H100, docs/PERFORMANCE.md, "The wgmma kernel in the default mode"):
  // at 128 heads on sm_90a the wgmma kernel in 3-tile segments, its whole-row calls folding them
  // in local memory, against the heads-on-M kernel: 128 + 1024 entries, rows 64 / 256
  // 88.83 / 331.82 us against 134.06 / 511.75 (8 rows: 32.78 against 42.87 on the H200), but
  // one row 23.19 against ~12 and 22 to ~33 rows, which it no longer splits, slower too (32
  // rows: 80.86 against 70.27 on the H200). Each fold moves the CTA's 128 KB total through L2
  // twice (whole rows without folds: 237.92 at 256 rows), so longer segments are faster from
  // 64 rows and slower below (6 tiles: 295.30 at 256 rows, 31.00 at one row). At 64 heads, one
  // CTA a row, the heads-on-M kernel stays: its 64-row call was faster (43.71 against 51.32)
  // and so were fewer rows.
  if (takes_wgmma(arch, problem) && problem.num_heads >= 128) {
    // A row of one segment names it by its length, as batch-variant mode's whole rows do.
    const int tiles = row_tiles(problem, 64);
    return wgmma_tile(std::min(tiles, default_segment_tiles(tiles, kWgmmaSegmentTiles)));
  }
  TileConfig config;
  // NOTE (measured on the H200, docs/PERFORMANCE.md): up to 16 heads, CTAs of 8 warps over
  // 32-entry tiles (2 entry blocks x 4 parts of the dims) with two stages, two CTAs per SM:
  // their barriers and latencies interleave, 1.24x faster than one CTA of 16 warps over
  // 64-entry tiles (103.5 vs 128.6 us for 16 heads, 128 + 1024 entries, 256 rows). More heads
  // run the heads-on-M kernel (mma_sync_hm), 32 heads per CTA over 64-entry tiles (8 warps,
  // one CTA per SM): 1.28x faster than the entries-on-M kernel's 32-head CTAs at 64 and 128
  // heads (128 heads, 128 + 1024 entries, 256 rows: 523 vs 672 us), while at 8 and 16 heads it
  // was slower (49.4 vs 41.1 us at 8 heads; 16-warp CTAs slower at every width).
  if (problem.num_heads <= 16) {
    config.heads_per_cta = problem.num_heads <= 8 ? 8 : 16;
    config.warps = 8;
    config.tile_entries = 32;
    config.stages = 2;
    config.min_blocks_per_sm = 2;
  } else {
    config.heads_per_cta = 32;
    config.warps = 8;
    config.tile_entries = 64;
    config.stages = 2;
    config.min_blocks_per_sm = 1;
    config.mma = MmaPath::kMmaSyncHeadsM;
  }
  // Segments of 128 entries for CSA-sized rows keep a 1-row call spread over ~10 CTAs.
  const int tiles = (total_width(problem) + config.tile_entries - 1) / config.tile_entries;
  config.segment_tiles = default_segment_tiles(tiles, kSegmentEntries / config.tile_entries);
  // The bf16 layout's entries are twice the fp8 ones: one CTA per SM where two do not fit.
  if (!KernelKey::decode("", problem, config).unsupported_tile().empty()) {
    config.min_blocks_per_sm = 1;
  }
  return config;
}

std::vector<NarrowSplit> narrow_splits(const smla_problem& problem, const TileConfig& tile) {
  // NOTE (measured on the H200, docs/PERFORMANCE.md): split calls whose narrower grid fits one
  // wave are faster, those past it slower. 16 heads, 128 + 1024 entries (9 segments) over 8-head
  // CTAs: rows 1 / 7 / 8 12.16 / 12.68 / 12.80 -> 10.59 / 11.53 / 12.93 us; 32 heads (64-entry
  // tiles): 1 row 16.94 -> 9.54 (8 heads per CTA), 4 rows 17.68 -> 12.21 (16), 8 rows 18.52 ->
  // 20.51 (16); 128 heads: 1 row 17.47 -> 11.93 (16).
  std::vector<NarrowSplit> narrow;
  const int segments = KernelKey::decode("", problem, tile).geometry().segments;
  if (segments < 2) return narrow;
  for (const int heads_per_cta : {8, 16}) {
    if (heads_per_cta >= tile.heads_per_cta) break;
    const int head_groups = ceil_div(problem.num_heads, heads_per_cta);
    NarrowSplit split{tile, kNarrowSplitCtas / (segments * head_groups)};
    split.tile.heads_per_cta = heads_per_cta;
    if (split.max_rows < 1) continue;
    if (!KernelKey::decode("", problem, split.tile).unsupported_tile().empty()) continue;
    narrow.push_back(split);
  }
  return narrow;
}

static_assert(combine_shape(kFewRowSegments).batch == kFewRowSegments,
              "a few-row split's row is one batch of the combine kernel's loads");

std::optional<NarrowSplit> few_row_split(const smla_problem& problem) {
  smla_problem narrow = problem;
  narrow.num_heads = 8;  // the entries-on-M kernel's tile at every head count
  NarrowSplit split{default_tile_config("", narrow), 0};
  split.tile.segment_tiles = ceil_div(row_tiles(problem, split.tile.tile_entries), kFewRowSegments);
  const KernelKey key = KernelKey::decode("", problem, split.tile);
  const int segments = key.geometry().segments;
  if (segments < 2 || !key.unsupported_tile().empty()) return std::nullopt;
  split.max_rows = kFewRowCtas / (segments * ceil_div(problem.num_heads, 8));
  if (split.max_rows < 1) return std::nullopt;
  return split;
}

std::vector<NarrowSplit> wave_splits(const smla_problem& problem) {
  std::vector<NarrowSplit> splits;
  const TileConfig tile = default_tile_config("", problem);
  if (tile.segment_tiles * tile.tile_entries != kSegmentEntries) return splits;
  const int wave = wave_ctas(tile);
  const int head_groups = ceil_div(problem.num_heads, tile.heads_per_cta);
  const DecodeGeometry geometry = KernelKey::decode("", problem, tile).geometry();
  int min_rows = wave / (geometry.segments * head_groups) + 1;
  int previous = geometry.segments;
  for (int k = 2; k * tile.segment_tiles < geometry.tiles; ++k) {
    NarrowSplit split{tile, 0, min_rows};
    const int wanted = ceil_div(geometry.tiles, k * tile.segment_tiles);
    split.tile.segment_tiles = ceil_div(geometry.tiles, wanted);
    const int segments = ceil_div(geometry.tiles, split.tile.segment_tiles);
    if (segments >= previous || segments < 2) continue;
    previous = segments;
    split.max_rows = wave / (segments * head_groups);
    if (split.max_rows < min_rows) continue;
    splits.push_back(split);
    min_rows = split.max_rows + 1;
  }
  return splits;
}

std::optional<TileConfig> batch_variant_tile(const std::string& arch, const smla_problem& problem) {
  // NOTE (measured on the H200, docs/PERFORMANCE.md, "Batch-variant mode"): the wgmma kernel
  // over whole rows was 1.75-1.9x the mma.sync default tiles from 64 rows at 128 heads and from
  // 96 rows at 64 heads, about even at 32 and 64 rows (kBatchVariantCtas), slower below, where
  // the default splits rows.
  if (takes_wgmma(arch, problem)) return wgmma_tile(row_tiles(problem, 64));  // whole rows
  TileConfig tile = default_tile_config("", problem);
  const DecodeGeometry geometry = KernelKey::decode(arch, problem, tile).geometry();
  if (geometry.segments < 2 || tile.segment_tiles * tile.tile_entries != kSegmentEntries) {
    return std::nullopt;
  }
  tile.segment_tiles = geometry.tiles;
  return tile;
}

std::vector<KernelKey> default_problem_kernels(const std::string& arch,
                                               const smla_problem& problem) {
  std::vector<KernelKey> keys;
  const auto add = [&](const KernelKey& key) {
    for (const KernelKey& known : keys) {
      if (known.text() == key.text()) return;
    }
    keys.push_back(key);
  };
  // Each mode's default tile and its narrow splits: batch-variant mode's is the mma.sync one.
  for (const std::string& tile_arch : {arch, std::string()}) {
    const TileConfig tile = default_tile_config(tile_arch, problem);
    add(KernelKey::decode(arch, problem, tile));
    for (const NarrowSplit& narrow : narrow_splits(problem, tile)) {
      add(KernelKey::decode(arch, problem, narrow.tile));
    }
  }
  if (const std::optional<NarrowSplit> few = few_row_split(problem)) {
    add(KernelKey::decode(arch, problem, few->tile));
  }
  for (const NarrowSplit& wave : wave_splits(problem)) {
    add(KernelKey::decode(arch, problem, wave.tile));
  }
  if (const std::optional<TileConfig> fast = batch_variant_tile(arch, problem)) {
    add(KernelKey::decode(arch, problem, *fast));
  }
  for (size_t i = 0, decode_kernels = keys.size(); i < decode_kernels; ++i) {
    if (keys[i].geometry().segments > 1) add(KernelKey::combine_for(keys[i]));
  }
  return keys;
}

}  // namespace smla
