// The heuristic tile configuration of a decode problem, used until `smla tune` has measured a
// better one. It depends on the problem only, never on the batch size, because the tile and
// segment shape decide the floating-point order of a row's reduction: a row gives the same
// bits whatever else is in the batch.
#pragma once

#include <smla.h>

#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel_key.h"
#include "codegen/tile_config.h"

namespace smla {

TileConfig default_tile_config(const smla_problem& problem);

// The kernel of a problem's few-row split calls, where it differs from `tile`'s: the same tile
// with fewer heads per CTA, so a row's segments spread over more CTAs. The decode kernel gives a
// head the same bits at 8 and at 16 heads per CTA, so rows keep their bits whichever runs.
struct NarrowSplit {
  TileConfig tile;
  int max_rows;  // calls of at most this many rows use it
};
std::optional<NarrowSplit> narrow_split(const smla_problem& problem, const TileConfig& tile);

// The kernels smla_prepare loads for `problem` on `arch` without a forced tile: the default
// tile's decode kernel, the narrow split's, and the combine kernel of each that has segments.
std::vector<KernelKey> default_problem_kernels(const std::string& arch,
                                               const smla_problem& problem);

}  // namespace smla
