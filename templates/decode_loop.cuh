// The decode loop, once for every tile path: the walk over a CTA's tiles, the gather ring, the
// per-tile barrier, segment ends, and what a CTA leaves: a folded total, a split partial or the
// output. What a path computes and where its state lives is its policy (decode_kernel.cuh:
// entries on the MMAs' M; decode_heads_m_kernel.cuh: heads on M; decode_wgmma_kernel.cuh).
//
// A policy P is a struct whose member functions run_tiles calls, in this order:
//   init(p)                    zeroes the state (before the walk)
//   start(p, w)                once, after the ring's first copies: the query tile, factors
//   landed()                   per tile, after its copies are waited for, before the barrier
//   scores(p, stage)           per tile: the scores of the tile in `stage`, ...
//   softmax(fresh)             ... their probabilities (`fresh`: the tile is its segment's first)
//   values(stage, fresh)       ... and the value product
//   end_segment()              a segment's last tile is done: its sums
//   fold(folds, last)          then, with folds, the segment into the total (`folds`: the
//                              segments folded before it; `last`: the walk's last segment)
//   folded_total(folds, tiles) after the walk, with folds: the total's (max, sum) (`folds`: the
//                              segments folded, the last one included) ...
//   segment_total(tiles)       ... or without: the CTA's one segment's (`tiles`: the walk's count)
//   store_partial_stats(p, w)  split mode: (max, sum) per head to the workspace ...
//   store_partial_values(p, w) ... and, after a nonempty walk, the values
//   store_output(p, w)         otherwise: out in bf16, and the lse
// with the member smem (the base of the shared-memory map) and the constant kSplitItems (whether
// the path's calls may split rows into items).
// NOTE: the steps take the loop's scalars by value and the counters are declared in the order
// below: the compiler's order of the loop's registers follows both, and ptxas' code that order.
#pragma once

#include "decode_common.cuh"

namespace smla {
namespace decode {

template <typename Path>
SMLA_DEVICE void run_tiles(Path& path, const DecodeParams& p, const WorkItem w) {
  unsigned char* const smem = path.smem;
  path.init(p);
  const TileWalk walk = make_walk(w.length0, w.length1, w.begin, w.end);
  GatherRing ring;
  ring.start(p, smem, walk, w);
  // After the first copies are issued, so that the query's latency overlaps theirs.
  path.start(p, w);

  int i;
  int stage = 0;
  int tile = walk.first;
  bool segment_fresh = true;  // no tile of the current segment is done
  int folds = 0;              // segments folded into the total so far
  for (i = 0; i < walk.count; ++i) {
    cp_async_wait<kStages - 2>();
    path.landed();
    // Position i has landed for every thread, and every warp is done with position i - 1.
    __syncthreads();
    ring.advance(p, smem, walk, w, i, stage);
    path.scores(p, stage);
    path.softmax(segment_fresh);
    path.values(stage, segment_fresh);

    const int next_tile = walk.next(tile);
    const bool segment_ends =
        i + 1 == walk.count || next_tile / kSegmentTiles != tile / kSegmentTiles;
    tile = next_tile;
    stage = stage + 1 == kStages ? 0 : stage + 1;
    segment_fresh = segment_ends;
    if (segment_ends) {
      path.end_segment();
      // Without folds (split items of one segment) the segment is the CTA's total.
      if (kFolds && p.folds) {
        path.fold(folds, i + 1 == walk.count);
        ++folds;
      }
    }
  }

  // The (max, sum) of what is finished: the folded total, or the CTA's one segment.
  if (kFolds && p.folds) {
    path.folded_total(folds, walk.count);
  } else {
    path.segment_total(walk.count);
  }
  if (Path::kSplitItems && p.split) {
    path.store_partial_stats(p, w);
    // A segment with no nonempty tile leaves its values unwritten: its max is -inf, and the
    // combine kernel never reads them. A prefix item's values are its folded total.
    if (walk.count == 0) return;
    path.store_partial_values(p, w);
    return;
  }
  path.store_output(p, w);
}

}  // namespace decode
}  // namespace smla
