// The lazy-reference softmax of the decode kernels: each head's probabilities are exp2(score - m)
// against a segment reference m that moves only when a score passes it by kLazyMargin. The
// per-value rules are here for every path; lazy_softmax is the tile step of the mma.sync paths,
// whose owners of a head's scores meet its maximum in shared memory.
#pragma once

#include "smla_device.cuh"

namespace smla {
namespace decode {

// NOTE: within a segment the probabilities are exp2(score - m) for a running reference m that
// is raised only when a score exceeds it by more than kLazyMargin (log2 units), so P <= 2^15
// (f16, bf16 and the fp32 sums hold it) and most tiles need neither the per-head maxima nor a
// rescale: one barrier and ~100 instructions per warp less. The first tile of a segment always
// sets m to its exact maximum.
constexpr float kLazyMargin = 15.0f;

// The probability of score x (log2 units) against reference m; 0 for an invalid entry (-inf).
SMLA_DEVICE float probability(float x, float m) {
  return x == neg_inf() ? 0.0f : exp2_approx(x - m);
}

// Moves a head's segment reference for a tile whose scores peak at tile_max; returns the
// factor of what the segment holds so far (0 while it holds nothing). kAlone: the reference
// moves only when the head's own scores pass it by the margin (so a head's bits do not depend on
// the other heads of its CTA), and a head that keeps it rescales by exactly 1; otherwise every
// head takes its exact maximum.
// NOTE: tile_max by reference: as a value parameter the compiler orders the comparison's
// operands otherwise, which changes the machine code.
template <bool kAlone>
SMLA_DEVICE float move_reference(float& reference, const float& tile_max) {
  const float m = reference;
  if (kAlone) {
    const bool raises = tile_max > m + kLazyMargin;
    const float rescale = m == neg_inf() ? 0.0f : raises ? exp2_approx(m - tile_max) : 1.0f;
    if (raises) reference = tile_max;
    return rescale;
  }
  const float new_max = fmaxf(m, tile_max);
  const float rescale = m == neg_inf() ? 0.0f : exp2_approx(m - new_max);
  reference = new_max;
  return rescale;
}

// One tile's softmax for a path whose threads own scattered (head, entry) scores (log2 units,
// -inf where invalid): probabilities against the current references, stored for the value
// product; if any score of the CTA passes its reference by the margin (or is a head's first valid
// score), every thread takes the exact path instead: the tile's maxima meet in shared memory, the
// references move, and the probabilities, the sums and the accumulators follow. `fresh`: the
// tile is its segment's first (nothing accumulated yet). A fresh tile always ends on the exact
// path (its references are -inf; a tile with no valid score gives the same zeros on either path),
// so with Tile::kFreshTilesExact it skips the lazy pass and its vote.
// NOTE: the sums add the fp32 probabilities: with a lazy reference the largest terms are not
// exactly 1, and summing their bf16 roundings would cost the lse ~2^-9.
//
// Tile's steps, on its members (the scores, the probabilities, a factor per head):
//   void lazy_pass(raise)   probabilities against the references, stored; `raise` set if a
//                           score passes its reference by the margin
//   void add_lazy()         adds them to the sums
//   void write_maxima()     this thread's share of the tile's maxima, to shared memory
//   void move_references()  reads the maxima, moves the references (move_reference)
//   void exact_pass()       probabilities against the moved references, stored and summed
//   void rescale_values()   the accumulators of a segment under way
template <typename Tile>
SMLA_DEVICE void lazy_softmax(Tile& tile, bool fresh) {
  bool raise = false;
  const bool skip_lazy = Tile::kFreshTilesExact && fresh;
  if (!skip_lazy) tile.lazy_pass(raise);
  if (!skip_lazy && !syncthreads_any(raise)) {
    tile.add_lazy();
  } else {
    tile.write_maxima();
    __syncthreads();
    tile.move_references();
    tile.exact_pass();
    if (!fresh) tile.rescale_values();
    __syncthreads();
  }
}

}  // namespace decode
}  // namespace smla
