// The tile configuration of a decode kernel: every choice that shapes its code besides the
// problem. Part of the KernelKey; the autotuner proposes candidates, the heuristic picks one.
#pragma once

#include <optional>
#include <string>

namespace smla {

// Which tensor-core path the kernel uses. Only the portable mma.sync path exists so far; the
// name is part of the key so a Hopper-only path can join without colliding.
enum class MmaPath { kSyncBf16 };

struct TileConfig {
  int heads_per_cta = 16;     // 16 or 32: heads are the M of the score MMA
  int warps = 4;              // consumer warps, each owning 512 / warps dims (4 or 8)
  int tile_entries = 32;      // KV entries per pipeline stage (16, 32, 48, 64)
  int stages = 3;             // pipeline depth
  int segment_tiles = 4;      // tiles per segment: the fold unit of split-KV
  int min_blocks_per_sm = 1;  // __launch_bounds__ occupancy hint (register budget)
  MmaPath mma = MmaPath::kSyncBf16;

  // "hg16.w4.te32.st3.seg4.mb1.sync_bf16"
  std::string text() const;
  static std::optional<TileConfig> parse(const std::string& text);
  bool operator==(const TileConfig& other) const { return text() == other.text(); }
};

}  // namespace smla
