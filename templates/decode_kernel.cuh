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
// segment's lazy reference (decode_lazy_softmax.cuh). Values: every warp accumulates O^T = V^T P^T
// for its kPvDims dims (dims are the M, heads the N) straight from the gathered stage:
// ldmatrix.trans of the raw e4m3 bytes, split into even and odd dims by a byte permute and
// converted to f16; the packed scales ride on the probabilities (prepare_value_scales). bf16 values
// (the bf16 layout, the packed rope) use bf16 products.
//
// Segments. The row's tiles are cut into fixed segments (segment_fold.cuh): a segment starts
// from a fresh softmax state and is folded into the running total at its end, in the CTA for
// whole rows and prefix items or in the combine kernel in split mode, with identical operations.
// The loop is decode_loop.cuh's; EntriesOnM below is this kernel's policy.
//
// The generated prologue defines namespace smla::cfg (see codegen/kernel_source.cpp).
#pragma once

#include "decode_kernel_scores.cuh"
#include "decode_kernel_softmax.cuh"
#include "decode_kernel_values.cuh"
#include "decode_lazy_softmax.cuh"
#include "decode_loop.cuh"

namespace smla {
namespace decode {

// ---- the path ---------------------------------------------------------------------------------

// NOTE: a fresh tile skips the lazy pass (lazy_softmax) only with 32-head CTAs: 6% faster there
// (H200, 64 heads, 256 rows); with 8 and 16 heads per CTA, at their 128-register budget, ptxas
// then schedules the whole loop worse (1-1.5% slower).
constexpr bool kFreshTilesExact = kHeadsPerCta == 32;

using PerCombo = float[kCombos];  // per (n tile, head pair) column of the thread: its heads

// The entries-on-M policy of run_tiles (decode_loop.cuh). The folded (max, sum) per head (whole
// rows, prefix items) is in shared memory rather than registers: it is the same for every thread
// and used once per segment. Buffer `folds % 2` holds it; a fold reads it and the first thread of
// each head writes the next buffer (both sides of the segment end's barrier, so one buffer never
// has a reader and a writer at once). The folded values are in registers or in shared memory
// (decode_kernel_values.cuh: total_at).
// NOTE: the arrays are locals of run_cta, each on its own, and the policy refers to them: ptxas'
// code depends on when the compiler promotes each array to registers, which one object holding
// them all would delay to the last of them.
struct EntriesOnM {
  static constexpr bool kSplitItems = true;
  static constexpr bool kFreshTilesExact = decode::kFreshTilesExact;

  unsigned char* smem;
  const Lanes& t;
  float* maxima;      // the tile maxima's slots
  float* sums;        // the segment sums' slots
  float* folded;      // the two buffers of the folded (max, sum) per head (set by init)
  bool folds_writer;  // covers every head once (set by init)
  Accumulators& acc;
  PerCombo& seg_max;           // the segment's reference (log2 units)
  float (&owned_sum)[kOwned];  // this thread's share of the running sum of its owned values
  float (&owned_factor)[kOwnedCombos];   // the score factors of the owned values' heads
  ValueScales<kPvGroups>& value_scales;  // packed: set by the first tile of each segment
  // A tile's scratch: the warp's partial scores, the owned scores, their probabilities, the
  // heads' rescale factors, and a fold's steps.
  float (&s)[kNTiles][4];
  float (&x)[kOwned];
  float (&prob)[kOwned];
  PerCombo& rescale;
  FoldStep (&step)[kCombos];
  // The (max, sum) of what is finished.
  PerCombo& total_max;
  PerCombo& total_sum;

  SMLA_DEVICE void init(const DecodeParams& p) {
#pragma unroll
    for (int mt = 0; mt < kPvMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          acc.o[mt][nt][e] = 0.0f;
          if (kFolds && p.folds) total_at(smem, acc, mt, nt, e) = 0.0f;
        }
#pragma unroll
    for (int k = 0; k < kCombos; ++k) seg_max[k] = neg_inf();
#pragma unroll
    for (int k = 0; k < kOwned; ++k) owned_sum[k] = 0.0f;
    folded = (float*)(smem + kGeo.fold_offset);
    folds_writer = t.warp == 0 && t.g == 0;
    if (kFolds && folds_writer) {
#pragma unroll
      for (int k = 0; k < kCombos; ++k) {
        folded[2 * t.head(k)] = neg_inf();
        folded[2 * t.head(k) + 1] = 0.0f;
      }
    }
  }

  SMLA_DEVICE void start(const DecodeParams& p, const WorkItem& w) {
    load_query_tile<kE4m3Scores>(p, smem, w.row, w.head_group);
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kOwnedCombos; ++j) {
      owned_factor[j] = score_factor(p, smem, t.head(t.owned_combo(j)));
    }
  }

  SMLA_DEVICE void landed() {}

  SMLA_DEVICE void scores(const DecodeParams&, int stage) {
    if (kBf16Kv) {
      bf16_scores(smem, t, stage, s);
    } else {
      fp8_scores(smem, t, stage, s);
    }
    owned_scores(smem, t, stage, owned_factor, s, x);
  }

  SMLA_DEVICE void softmax(bool fresh) { lazy_softmax(*this, fresh); }

  SMLA_DEVICE void scale_values(int j, float f) { scale_group(acc, j, f); }

  SMLA_DEVICE void values(int stage, bool fresh) {
    const auto scale = [&](int j, float f) { scale_values(j, f); };
    if (kPacked) prepare_value_scales(smem, t, stage, fresh, value_scales, scale);
    accumulate_values(smem, t, stage, acc);
  }

  // ---- lazy_softmax's steps: a thread owns kOwned (entry, head) values

  SMLA_DEVICE void lazy_pass(bool& raise) {
#pragma unroll
    for (int k = 0; k < kOwned; ++k) {
      const int combo = t.owned_combo(k);
      const float m = pick(seg_max, combo);
      raise = raise || x[k] > m + kLazyMargin;
      prob[k] = x[k] == neg_inf() ? 0.0f : exp2_approx(x[k] - m);
      store_probability(smem, t.owned_prob_at(k), prob[k]);
    }
  }

  SMLA_DEVICE void add_lazy() {
#pragma unroll
    for (int k = 0; k < kOwned; ++k) owned_sum[k] = __fadd_rn(owned_sum[k], prob[k]);
  }

  SMLA_DEVICE void write_maxima() { write_max_slots(t, maxima, x); }

  // kHeadsAlone (decode_kernel_softmax.cuh): a head moves its reference on its own scores only.
  SMLA_DEVICE void move_references() {
#pragma unroll
    for (int k = 0; k < kCombos; ++k) {
      const float tile_max = read_max(maxima, t.head(k));
      rescale[k] = move_reference<kHeadsAlone>(seg_max[k], tile_max);
    }
  }

  SMLA_DEVICE void exact_pass() {
#pragma unroll
    for (int k = 0; k < kOwned; ++k) {
      const int combo = t.owned_combo(k);
      const float exact = x[k] == neg_inf() ? 0.0f : exp2_approx(x[k] - pick(seg_max, combo));
      store_probability(smem, t.owned_prob_at(k), exact);
      owned_sum[k] = __fadd_rn(__fmul_rn(owned_sum[k], pick(rescale, combo)), exact);
    }
  }

  SMLA_DEVICE void rescale_values() {
#pragma unroll
    for (int mt = 0; mt < kPvMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc.o[mt][nt][e] *= rescale[2 * nt + (e & 1)];
  }

  // ---- segments and results

  // The segment's sums per head go to their slots; without folds they stay there for the results.
  SMLA_DEVICE void end_segment() {
    const auto scale = [&](int j, float f) { scale_values(j, f); };
    if (kPacked) finish_value_scales(t, value_scales, scale);
    write_sum_slots(smem, t, sums, owned_sum);
    __syncthreads();
  }

  SMLA_DEVICE void fold(int folds, bool) {
    const float* from = folded + (folds % 2) * 2 * kHeadsPerCta;
    float* to = folded + (1 - folds % 2) * 2 * kHeadsPerCta;
#pragma unroll
    for (int k = 0; k < kCombos; ++k) {
      float total_sum, total_max;
      total_max = from[2 * t.head(k)], total_sum = from[2 * t.head(k) + 1];
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

  SMLA_DEVICE void folded_total(int folds, int) {
    __syncthreads();  // the last fold's (or the initial) state is written
    const float* from = folded + (folds % 2) * 2 * kHeadsPerCta;
#pragma unroll
    for (int k = 0; k < kCombos; ++k) {
      total_max[k] = from[2 * t.head(k)];
      total_sum[k] = from[2 * t.head(k) + 1];
    }
  }

  // The segment's sums are still in their slots; nothing to sum without a tile.
  SMLA_DEVICE void segment_total(int tiles) {
#pragma unroll
    for (int k = 0; k < kCombos; ++k) {
      total_max[k] = seg_max[k];
      total_sum[k] = tiles > 0 ? read_sum(sums, t.head(k)) : 0.0f;
    }
  }

  SMLA_DEVICE void store_partial_stats(const DecodeParams& p, const WorkItem& w) {
    if (t.warp == 0 && t.g == 0) {
#pragma unroll
      for (int k = 0; k < kCombos; ++k) {
        float* ml = p.partial_ml + (w.item * kHeadsPerCta + t.head(k)) * 2;
        ml[0] = total_max[k];
        ml[1] = total_sum[k];
      }
    }
  }

  SMLA_DEVICE void store_partial_values(const DecodeParams& p, const WorkItem& w) {
    if (kFolds && p.folds) {
#pragma unroll
      for (int mt = 0; mt < kPvMTiles; ++mt)
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc.o[mt][nt][e] = total_at(smem, acc, mt, nt, e);
    }
    float* out = p.partial_out + w.item * kHeadsPerCta * kHeadDim;
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
  }

  SMLA_DEVICE void store_output(const DecodeParams& p, const WorkItem& w) {
#pragma unroll
    for (int k = 0; k < kCombos; ++k) {
      const int head = w.head_group * kHeadsPerCta + t.head(k);
      if (head >= kNumHeads) continue;
      const float factor =
          output_factor(total_max[k], total_sum[k], sink_log2(p, head), p.out_scale);
      if (kWantLse && t.warp == 0 && t.g == 0) {
        p.lse[(i64)w.row * kNumHeads + head] = row_lse(total_max[k], total_sum[k]);
      }
      u16* out = (u16*)p.out + (i64)w.row * p.out_row_stride + (i64)head * p.out_head_stride;
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
};

SMLA_DEVICE void run_cta(const DecodeParams& p, unsigned char* smem, const WorkItem& w) {
  const Lanes t = make_lanes();
  float* maxima = (float*)(smem + kGeo.reduce_offset);
  Accumulators acc;
  PerCombo seg_max;
  float owned_sum[kOwned];
  float owned_factor[kOwnedCombos];
  ValueScales<kPvGroups> value_scales;
  float s[kNTiles][4];
  float x[kOwned];
  float prob[kOwned];
  PerCombo rescale;
  FoldStep step[kCombos];
  PerCombo total_max, total_sum;
  EntriesOnM path{smem,
                  t,
                  maxima,
                  maxima + kHeadsPerCta * kOwn.slots_per_head,
                  nullptr,
                  false,
                  acc,
                  seg_max,
                  owned_sum,
                  owned_factor,
                  value_scales,
                  s,
                  x,
                  prob,
                  rescale,
                  step,
                  total_max,
                  total_sum};
  run_tiles(path, p, w);
}

}  // namespace decode
}  // namespace smla

#include "decode_entry.cuh"
