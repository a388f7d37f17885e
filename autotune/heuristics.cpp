#include "autotune/heuristics.h"

#include "codegen/kernel_key.h"

namespace smla {
namespace {

int total_width(const smla_problem& problem) {
  int width = 0;
  for (int s = 0; s < problem.num_sources; ++s) width += problem.sources[s].width;
  return width;
}

}  // namespace

TileConfig default_tile_config(const smla_problem& problem) {
  TileConfig config;
  // NOTE: 16 warps over 64-entry tiles: four 16-entry blocks, each scored by four warps (one
  // per quarter of the dims). Heads are the N of the MMAs, so 8 heads compute 8. Three stages,
  // the value tile and the query tile take ~210 KB: one CTA per SM, 128 registers a thread.
  config.heads_per_cta = problem.num_heads <= 8 ? 8 : 16;
  config.warps = 16;
  config.tile_entries = 64;
  config.stages = 3;
  config.min_blocks_per_sm = 1;
  // Segments of 128 entries for CSA-sized rows keep a 1-row call spread over ~10 CTAs; wider
  // rows (HCA at long context) use ~8 segments so split partials stay a small share of the bytes.
  const int tiles = (total_width(problem) + config.tile_entries - 1) / config.tile_entries;
  config.segment_tiles = tiles <= 24 ? 2 : (tiles + 7) / 8;
  // As deep a pipeline as shared memory holds (bf16 entries are twice the fp8 ones).
  constexpr int kSharedMemoryLimit = 227 * 1024;
  while (config.stages > 2 &&
         KernelKey::decode("", problem, config).geometry().smem_bytes > kSharedMemoryLimit) {
    --config.stages;
  }
  return config;
}

}  // namespace smla
