// The tile configuration of a decode kernel: every choice that shapes its code besides the
// problem. Part of the KernelKey; the autotuner proposes candidates, the heuristic picks one.
#pragma once

#include <optional>
#include <string>

namespace smla {

// Which tensor-core path and template the kernel uses; the name is part of the key.
//   kMmaSync ("mma_sync"): entries are the M of the MMAs, heads their N (decode_kernel.cuh);
//   kMmaSyncHeadsM ("mma_sync_hm"): heads are the M, entries or dims the N
//     (decode_heads_m_kernel.cuh);
//   kWgmma ("wgmma", sm_90a only): 64 heads the M of warpgroup MMAs over a bf16 tile
//     (decode_wgmma_kernel.cuh).
// The first two are portable mma.sync paths (sm_90a, sm_100a, sm_103a).
enum class MmaPath { kMmaSync, kMmaSyncHeadsM, kWgmma };
const char* mma_path_name(MmaPath path);

struct TileConfig {
  int heads_per_cta = 16;     // mma_sync: 8, 16 or 32; mma_sync_hm: 16 or 32; wgmma: 64
  int warps = 16;             // mma_sync: 2 or 4 per 16-entry block (the parts of the dims);
                              // mma_sync_hm: 8 (two per 16-entry block)
  int tile_entries = 64;      // KV entries per pipeline stage (32 or 64; mma_sync_hm: 64)
  int stages = 3;             // pipeline depth
  int segment_tiles = 2;      // tiles per segment: the fold unit of split-KV
  int min_blocks_per_sm = 1;  // __launch_bounds__ occupancy hint (register budget)
  MmaPath mma = MmaPath::kMmaSync;

  // "hg16.w16.te64.st3.seg2.mb1.mma_sync"
  std::string text() const;
  static std::optional<TileConfig> parse(const std::string& text);
  bool operator==(const TileConfig& other) const { return text() == other.text(); }
};

}  // namespace smla
