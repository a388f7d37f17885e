// Decode kernel keys the DecodeScheduler tests plan for: head counts that fill, split and
// overflow head groups, one and two sources from one tile to HCA at 1M context, with the
// heuristic's tile and with one-tile segments (the most segments a row can have).
#pragma once

#include <vector>

#include "autotune/heuristics.h"
#include "codegen/decode_family.h"
#include "cpu/codegen/dsv4_problems.h"
#include "plan/split_tiles.h"
#include "support/arch_of.h"

namespace smla::scheduler_test {

inline std::vector<DecodeKernel> scheduler_keys() {
  std::vector<smla_problem> problems;
  for (int heads : {1, 8, 16, 17, 32, 48, 64, 100, 128}) {
    problems.push_back(test::dsv4_window_problem(heads));
    for (int width : {16, 512, 1024, 8192}) {
      problems.push_back(test::dsv4_compressed_problem(heads, 64, width));
    }
  }
  std::vector<DecodeKernel> keys;
  for (const smla_problem& problem : problems) {
    const TileConfig heuristic = mma_sync_tile(test::arch_of("sm_90a"), problem);
    TileConfig one_tile_segments = heuristic;
    one_tile_segments.segment_tiles = 1;
    for (const TileConfig& tile : {heuristic, one_tile_segments}) {
      keys.push_back(DecodeKernel::of(test::arch_of("sm_100a"), problem, tile));
    }
  }
  return keys;
}

}  // namespace smla::scheduler_test
