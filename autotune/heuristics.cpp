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
  // NOTE: 8 warps (64 dims each). 16 heads fit in 128 registers and ~108 KB of shared memory
  // with 3 stages, so two CTAs share an SM and one's barriers hide behind the other's work
  // (1.4x faster than one CTA with 4-6 stages, measured on the H200).
  // 32 heads need ~190 registers: one CTA per SM with a deeper pipeline.
  config.warps = 8;
  config.heads_per_cta = problem.num_heads <= 16 ? 16 : 32;
  // The bf16 layout's score fragments come through ldmatrix and need a few more registers than
  // 128: it keeps one CTA per SM.
  config.min_blocks_per_sm =
      config.heads_per_cta == 16 && problem.kv_layout != SMLA_KV_BF16 ? 2 : 1;
  config.stages = config.heads_per_cta == 16 ? 3 : 4;
  config.tile_entries = 32;
  // Segments of ~128 entries for CSA-sized rows keep a 1-row call spread over ~10 CTAs; wider
  // rows (HCA at long context) use ~8 segments so split partials stay a small share of the bytes.
  const int tiles = (total_width(problem) + config.tile_entries - 1) / config.tile_entries;
  config.segment_tiles = tiles <= 48 ? 4 : (tiles + 7) / 8;
  // As deep a pipeline as shared memory holds (bf16 entries are twice the fp8 ones).
  constexpr int kSharedMemoryLimit = 227 * 1024;
  while (config.stages > 2 &&
         KernelKey::decode("", problem, config).geometry().smem_bytes > kSharedMemoryLimit) {
    --config.stages;
  }
  return config;
}

}  // namespace smla
