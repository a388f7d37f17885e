// The heuristic tiles of a decode problem: the tile configurations smla runs until `smla tune`
// has measured better ones, and the bases of the tuning candidates. They depend on the problem
// and the arch only, never on the batch size, because the tile and segment shape decide the
// floating-point order of a row's reduction: a row gives the same bits whatever else is in the
// batch. Which of them serves which row counts is the plan's (plan/decode_plan.h).
#pragma once

#include <smla.h>

#include <optional>

#include "codegen/arch.h"
#include "codegen/tile_config.h"

namespace smla {

// The mma.sync tile every arch runs: entries on M up to 16 heads, heads on M above, in segments
// of 128 entries for CSA-sized rows (about 8 segments for wider ones). Batch-variant mode's
// schedule is built on it.
TileConfig mma_sync_tile(const ArchSpec& arch, const smla_problem& problem);

// The default mode's tile: on Hopper, problems of 128 heads on an fp8 layout run the wgmma
// kernel in segments of 3 tiles; everything else mma_sync_tile.
TileConfig default_tile(const ArchSpec& arch, const smla_problem& problem);

// Batch-variant mode's fast path, whole rows without folds: on Hopper, problems of a multiple of
// 64 heads on an fp8 layout run the wgmma kernel; others whose default cuts CSA-sized rows into
// 128-entry segments run mma_sync_tile with one segment a row. nullopt: none.
std::optional<TileConfig> fast_tile(const ArchSpec& arch, const smla_problem& problem);

// `tile` with the most CTAs per SM (up to its own) whose shared memory fits the arch: where two
// CTAs do not fit (the bf16 layout, the consumer parts' 100 KB), one.
TileConfig fitted_occupancy(const ArchSpec& arch, const smla_problem& problem, TileConfig tile);

// Segment tiles of the default mma.sync and wgmma tiles: segments of 128 entries for CSA-sized
// rows keep a 1-row call spread over ~10 CTAs.
constexpr int kSegmentEntries = 128;

}  // namespace smla
