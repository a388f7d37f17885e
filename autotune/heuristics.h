// The heuristic tile configuration of a decode problem, used until `smla tune` has measured a
// better one. It depends on the problem only, never on the batch size, because the tile and
// segment shape decide the floating-point order of a row's reduction: a row gives the same
// bits whatever else is in the batch.
#pragma once

#include <smla.h>

#include "codegen/tile_config.h"

namespace smla {

TileConfig default_tile_config(const smla_problem& problem);

}  // namespace smla
