// The tile configuration of a decode kernel: every choice that shapes its code besides the
// problem. Part of the KernelKey; the autotuner proposes candidates, the heuristic picks one.
#pragma once

#include <optional>
#include <string>

namespace smla {

// Which tensor-core path the kernel uses. Only the portable mma.sync path (f16 and bf16
// products) exists so far; the name is part of the key so a Hopper-only path can join without
// colliding.
enum class MmaPath { kMmaSync };

struct TileConfig {
  int heads_per_cta = 16;     // 8, 16 or 32: heads are the N of both MMAs
  int warps = 16;             // 2 or 4 per 16-entry block: the parts of the dims of the scores
  int tile_entries = 64;      // KV entries per pipeline stage (32 or 64)
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
