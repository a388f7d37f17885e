#include "plan/split_tiles.h"

#include "autotune/heuristics.h"
#include "codegen/decode_family.h"

namespace smla {
namespace {

DecodeGeometry geometry_of(const ArchSpec& arch, const smla_problem& problem,
                           const TileConfig& tile) {
  return DecodeKernel::of(arch, problem, tile).geometry();
}

bool buildable(const ArchSpec& arch, const smla_problem& problem, const TileConfig& tile) {
  return DecodeKernel::of(arch, problem, tile).unsupported().empty();
}

// A narrow split's grid: one wave with a few SMs to spare (128 CTAs of a 132-SM GPU).
int narrow_split_ctas(const ArchSpec& arch) { return arch.wave_sms * 128 / 132; }

}  // namespace

std::vector<SplitTile> narrow_splits(const ArchSpec& arch, const smla_problem& problem,
                                     const TileConfig& tile) {
  std::vector<SplitTile> narrow;
  const int segments = geometry_of(arch, problem, tile).segments;
  if (segments < 2) return narrow;
  for (const int heads_per_cta : {8, 16}) {
    if (heads_per_cta >= tile.heads_per_cta) break;
    const int head_groups = ceil_div(problem.num_heads, heads_per_cta);
    SplitTile split{tile, narrow_split_ctas(arch) / (segments * head_groups)};
    split.tile.heads_per_cta = heads_per_cta;
    if (split.max_rows < 1 || !buildable(arch, problem, split.tile)) continue;
    narrow.push_back(split);
  }
  return narrow;
}

static_assert(combine_shape(kFewRowSegments).batch == kFewRowSegments,
              "a few-row split's row is one batch of the combine kernel's loads");

std::optional<SplitTile> few_row_split(const ArchSpec& arch, const smla_problem& problem) {
  smla_problem narrow = problem;
  narrow.num_heads = 8;  // the entries-on-M kernel's tile at every head count
  SplitTile split{mma_sync_tile(arch, narrow), 0};
  int tiles = 0;
  for (int s = 0; s < problem.num_sources; ++s) {
    tiles += ceil_div(problem.sources[s].width, split.tile.tile_entries);
  }
  split.tile.segment_tiles = ceil_div(tiles, kFewRowSegments);
  split.tile = fitted_occupancy(arch, problem, split.tile);
  const int segments = geometry_of(arch, problem, split.tile).segments;
  if (segments < 2 || !buildable(arch, problem, split.tile)) return std::nullopt;
  split.max_rows = 2 * arch.wave_sms / (segments * ceil_div(problem.num_heads, 8));
  if (split.max_rows < 1) return std::nullopt;
  return split;
}

std::vector<SplitTile> wave_splits(const ArchSpec& arch, const smla_problem& problem) {
  std::vector<SplitTile> splits;
  const TileConfig tile = mma_sync_tile(arch, problem);
  if (tile.segment_tiles * tile.tile_entries != kSegmentEntries) return splits;
  const int wave = wave_ctas(arch, tile);
  const int head_groups = ceil_div(problem.num_heads, tile.heads_per_cta);
  const DecodeGeometry geometry = geometry_of(arch, problem, tile);
  int min_rows = wave / (geometry.segments * head_groups) + 1;
  int previous = geometry.segments;
  for (int k = 2; k * tile.segment_tiles < geometry.tiles; ++k) {
    SplitTile split{tile, 0, min_rows};
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

}  // namespace smla
