// The decode kernel family: sparse MQA over a 512-dim latent for one row per CTA (or one item
// of a row per CTA in split mode: work_item), heads_per_cta (8, 16 or 32) heads at a time, from
// paged KV caches. Design and measurements: docs/decode-kernel.md.
//
// Work decomposition. A tile holds kTileEntries entries (16 per entry block). 4 threads per
// entry gather each tile into a ring of shared-memory stages with cp.async (16-byte chunks,
// zero-filled for invalid entries, so nothing unselected is read), kStages - 1 tiles ahead;
// the indices are loaded one tile earlier still.
// Scores: entries are the M of the MMA and heads its N (S^T = K Q^T), so 8 heads cost 8. The
// kDimParts warps of an entry block each take 512 / kDimParts of the dims. For the fp8 layouts
// a warp converts its e4m3 slice to f16 in registers (one cvt per pair, exact) as its A
// fragments, against an f16 query tile (fp8 q on the uniform layout above 16 heads: e4m3 MMAs
// on the raw bytes, kE4m3Scores); the packed scales multiply each 64-dim group's partial sums.
// The parts' partial scores meet in shared memory, where each thread sums the values it owns
// (in part order, so the result does not depend on timing).
// Softmax: a thread owns kOwned (entry, head) scores and exponentiates them against the
// segment's lazy reference (run_cta). Values: every warp accumulates O^T = V^T P^T for its
// kPvDims dims (dims are the M, heads the N) straight from the gathered stage: ldmatrix.trans
// of the raw e4m3 bytes, split into even and odd dims by a byte permute and converted to f16;
// the packed scales ride on the probabilities (prepare_value_scales). bf16 values (the bf16
// layout, the packed rope) use bf16 products.
//
// Segments. The row's tiles are cut into fixed segments (segment_fold.cuh): a segment starts
// from a fresh softmax state and is folded into the running total at its end, in the CTA for
// whole rows and prefix items or in the combine kernel in split mode, with identical operations.
//
// The generated prologue defines namespace smla::cfg (see codegen/kernel_source.cpp).
#pragma once

#include "decode_kernel_scores.cuh"
#include "decode_kernel_softmax.cuh"
#include "decode_kernel_values.cuh"

namespace smla {
namespace decode {

// ---- the tile loop ------------------------------------------------------------------------------

// NOTE: a segment's first tile always ends on the exact path (its reference is -inf; a tile
// with no valid score gives the same zeros on either path), so it may skip the lazy pass and
// its vote. Measured on the H200: 6% faster with 32-head CTAs (64 heads, 256 rows: 206.9
// against 220.2 us); with 8 and 16 heads per CTA, at their 128-register budget, ptxas then
// schedules the whole loop worse (1-1.5% slower), so only there.
constexpr bool kFreshTilesExact = kHeadsPerCta == 32;

SMLA_DEVICE void run_cta(const DecodeParams& p, unsigned char* smem, const WorkItem& w) {
  const int length0 = w.length0, length1 = w.length1, row = w.row, head_group = w.head_group;
  const int begin = w.begin, end = w.end;
  const i64 item = w.item;
  const Lanes t = make_lanes();
  float* maxima = (float*)(smem + kGeo.reduce_offset);
  float* sums = maxima + kHeadsPerCta * kOwn.slots_per_head;

  Accumulators acc;
#pragma unroll
  for (int mt = 0; mt < kPvMTiles; ++mt)
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        acc.o[mt][nt][e] = 0.0f;
        if (kFolds && p.folds) total_at(smem, acc, mt, nt, e) = 0.0f;
      }
  // Softmax state per combo of the output fragments: the segment's reference m (log2 units).
  float seg_max[kCombos];
  float owned_sum[kOwned];  // this thread's share of the running sum of its owned values
#pragma unroll
  for (int k = 0; k < kCombos; ++k) seg_max[k] = neg_inf();
#pragma unroll
  for (int k = 0; k < kOwned; ++k) owned_sum[k] = 0.0f;
  // The folded (max, sum) per head (whole rows, prefix items), in shared memory rather than
  // registers: it is the same for every thread and used once per segment. Buffer `folds % 2` holds
  // it; a fold reads it and the first thread of each head writes the next buffer (both sides of the
  // segment end's barrier, so one buffer never has a reader and a writer at once).
  float* folded = (float*)(smem + kGeo.fold_offset);
  const bool folds_writer = t.warp == 0 && t.g == 0;  // covers every head once
  int folds = 0;
  if (kFolds && folds_writer) {
#pragma unroll
    for (int k = 0; k < kCombos; ++k) {
      folded[2 * t.head(k)] = neg_inf();
      folded[2 * t.head(k) + 1] = 0.0f;
    }
  }

  const TileWalk walk = make_walk(length0, length1, begin, end);
  GatherRing ring;
  ring.start(p, smem, walk, length0, length1, row);
  // After the first copies are issued, so that the query's latency overlaps theirs.
  load_query_tile<kE4m3Scores>(p, smem, row, head_group);
  __syncthreads();
  float owned_factor[kOwnedCombos];  // the score factors of the owned values' heads
#pragma unroll
  for (int j = 0; j < kOwnedCombos; ++j) {
    owned_factor[j] = score_factor(p, smem, t.head(t.owned_combo(j)));
  }

  int tile = walk.first;
  int stage = 0;
  bool segment_fresh = true;            // no tile of the current segment is done: acc.o is zero
  ValueScales<kPvGroups> value_scales;  // packed: set by the first tile of each segment
  for (int i = 0; i < walk.count; ++i) {
    cp_async_wait<kStages - 2>();
    // Position i has landed for every thread, and every warp is done with position i - 1.
    __syncthreads();
    ring.advance(p, smem, walk, length0, length1, row, i, stage);

    float s[kNTiles][4];
    if (kBf16Kv) {
      bf16_scores(smem, t, stage, s);
    } else {
      fp8_scores(smem, t, stage, s);
    }
    float x[kOwned];
    owned_scores(smem, t, stage, owned_factor, s, x);

    // Probabilities against the current reference; any score above it by the margin (or a
    // first valid score) makes every thread take the exact path below.
    // NOTE: the sums add the fp32 probabilities: with a lazy reference the largest terms are
    // not exactly 1, and summing their bf16 roundings would cost the lse ~2^-9.
    bool raise = false;
    float prob[kOwned];
    const bool skip_lazy = kFreshTilesExact && segment_fresh;
    if (!skip_lazy) {
#pragma unroll
      for (int k = 0; k < kOwned; ++k) {
        const int combo = t.owned_combo(k);
        const float m = pick(seg_max, combo);
        raise = raise || x[k] > m + kLazyMargin;
        prob[k] = x[k] == neg_inf() ? 0.0f : exp2_approx(x[k] - m);
        store_probability(smem, t.owned_prob_at(k), prob[k]);
      }
    }
    // The probabilities are complete (if no reference moves).
    if (!skip_lazy && !syncthreads_any(raise)) {
#pragma unroll
      for (int k = 0; k < kOwned; ++k) owned_sum[k] = __fadd_rn(owned_sum[k], prob[k]);
    } else {
      write_max_slots(t, maxima, x);
      __syncthreads();
      float rescale[kCombos];
#pragma unroll
      for (int k = 0; k < kCombos; ++k) {
        const float tile_max = read_max(maxima, t.head(k));
        if (kHeadsAlone) {
          // A head moves its reference only when its own scores pass the margin (not because
          // another head's did); one that keeps it rescales by exactly 1.
          const bool raises = tile_max > seg_max[k] + kLazyMargin;
          rescale[k] = seg_max[k] == neg_inf() ? 0.0f
                       : raises                ? exp2_approx(seg_max[k] - tile_max)
                                               : 1.0f;
          if (raises) seg_max[k] = tile_max;
        } else {  // every head takes its exact maximum
          const float new_max = fmaxf(seg_max[k], tile_max);
          rescale[k] = seg_max[k] == neg_inf() ? 0.0f : exp2_approx(seg_max[k] - new_max);
          seg_max[k] = new_max;
        }
      }
#pragma unroll
      for (int k = 0; k < kOwned; ++k) {
        const int combo = t.owned_combo(k);
        const float exact = x[k] == neg_inf() ? 0.0f : exp2_approx(x[k] - pick(seg_max, combo));
        store_probability(smem, t.owned_prob_at(k), exact);
        owned_sum[k] = __fadd_rn(__fmul_rn(owned_sum[k], pick(rescale, combo)), exact);
      }
      if (!segment_fresh) {
#pragma unroll
        for (int mt = 0; mt < kPvMTiles; ++mt)
#pragma unroll
          for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc.o[mt][nt][e] *= rescale[2 * nt + (e & 1)];
      }
      __syncthreads();
    }
    const auto scale = [&](int j, float factor) { scale_group(acc, j, factor); };
    if (kPacked) prepare_value_scales(smem, t, stage, segment_fresh, value_scales, scale);
    accumulate_values(smem, t, stage, acc);

    const int next_tile = walk.next(tile);
    const bool segment_ends =
        i + 1 == walk.count || next_tile / kSegmentTiles != tile / kSegmentTiles;
    tile = next_tile;
    stage = stage + 1 == kStages ? 0 : stage + 1;
    segment_fresh = segment_ends;
    if (segment_ends) {
      if (kPacked) finish_value_scales(t, value_scales, scale);
      write_sum_slots(smem, t, sums, owned_sum);
      __syncthreads();
      // Without folds (split items of one segment) the segment is the CTA's total: its sums stay
      // in their slots for the code after the loop.
      if (kFolds && p.folds) {
        const float* from = folded + (folds % 2) * 2 * kHeadsPerCta;
        float* to = folded + (1 - folds % 2) * 2 * kHeadsPerCta;
        ++folds;
        FoldStep step[kCombos];
#pragma unroll
        for (int k = 0; k < kCombos; ++k) {
          float total_max = from[2 * t.head(k)], total_sum = from[2 * t.head(k) + 1];
          const float seg_sum = read_sum(sums, t.head(k));
          step[k] = fold_state(total_max, total_sum, seg_max[k], seg_sum);
          if (folds_writer) to[2 * t.head(k)] = total_max, to[2 * t.head(k) + 1] = total_sum;
        }
        fold_accumulators(smem, acc, step);
#pragma unroll
        for (int k = 0; k < kCombos; ++k) seg_max[k] = neg_inf();
#pragma unroll
        for (int k = 0; k < kOwned; ++k) owned_sum[k] = 0.0f;
      }
    }
  }

  // The (max, sum) of what is finished: the folded total, or the CTA's one segment (its sums
  // are still in their slots; nothing to sum without a tile).
  float total_max[kCombos], total_sum[kCombos];
  if (kFolds && p.folds) {
    __syncthreads();  // the last fold's (or the initial) state is written
    const float* from = folded + (folds % 2) * 2 * kHeadsPerCta;
#pragma unroll
    for (int k = 0; k < kCombos; ++k) {
      total_max[k] = from[2 * t.head(k)];
      total_sum[k] = from[2 * t.head(k) + 1];
    }
  } else {
#pragma unroll
    for (int k = 0; k < kCombos; ++k) {
      total_max[k] = seg_max[k];
      total_sum[k] = walk.count > 0 ? read_sum(sums, t.head(k)) : 0.0f;
    }
  }

  if (p.split) {
    if (t.warp == 0 && t.g == 0) {
#pragma unroll
      for (int k = 0; k < kCombos; ++k) {
        float* ml = p.partial_ml + (item * kHeadsPerCta + t.head(k)) * 2;
        ml[0] = total_max[k];
        ml[1] = total_sum[k];
      }
    }
    // A segment with no nonempty tile leaves its values unwritten: its max is -inf, and the
    // combine kernel never reads them.
    if (walk.count == 0) return;
    // A prefix item's values are its folded total.
    if (kFolds && p.folds) {
#pragma unroll
      for (int mt = 0; mt < kPvMTiles; ++mt)
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc.o[mt][nt][e] = total_at(smem, acc, mt, nt, e);
    }
    float* out = p.partial_out + item * kHeadsPerCta * kHeadDim;
#pragma unroll
    for (int mt = 0; mt < kPvMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          float* at = out + t.head(2 * nt + (e & 1)) * kHeadDim + t.pv_dim(mt, e >> 1);
          if (!t.pairs_dims(mt)) {
            *at = acc.o[mt][nt][e];
          } else if (mt % 2 == 0) {
            *(float2*)at = make_float2(acc.o[mt][nt][e], acc.o[mt + 1][nt][e]);
          }
        }
    return;
  }
#pragma unroll
  for (int k = 0; k < kCombos; ++k) {
    const int head = head_group * kHeadsPerCta + t.head(k);
    if (head >= kNumHeads) continue;
    const float factor = output_factor(total_max[k], total_sum[k], sink_log2(p, head), p.out_scale);
    if (kWantLse && t.warp == 0 && t.g == 0) {
      p.lse[(i64)row * kNumHeads + head] = row_lse(total_max[k], total_sum[k]);
    }
    u16* out = (u16*)p.out + (i64)row * p.out_row_stride + (i64)head * p.out_head_stride;
    const int nt = k >> 1;
    const auto result = [&](int mt, int e) {
      const float v = kFolds ? total_at(smem, acc, mt, nt, e) : acc.o[mt][nt][e];
      return __fmul_rn(v, factor);
    };
#pragma unroll
    for (int mt = 0; mt < kPvMTiles; ++mt)
#pragma unroll
      for (int e = k & 1; e < 4; e += 2) {
        u16* at = out + t.pv_dim(mt, e >> 1);
        if (!t.pairs_dims(mt)) {
          *at = (u16)pack_bf16x2(result(mt, e), 0.0f);
        } else if (mt % 2 == 0) {
          *(u32*)at = pack_bf16x2(result(mt, e), result(mt + 1, e));
        }
      }
  }
}

}  // namespace decode
}  // namespace smla

#include "decode_entry.cuh"
