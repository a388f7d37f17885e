// The heads-on-M decode kernel (tile path mma_sync_hm): the problem, segments, split partials
// and outputs of decode_kernel.cuh, with the CTA's heads (16 or 32) the M of both products; its
// policy (HeadsOnM, here) runs in the loop of decode_loop.cuh. Parts: decode_heads_m_lanes.cuh
// (constants, Lanes), decode_heads_m_scores.cuh, decode_heads_m_values.cuh.
// Design and measurements: docs/decode-kernel.md.
//
// Scores: S = Q K^T. The two warps of a 16-entry block (two n tiles) each take half of the
// 512 dims, so each A fragment of the query tile (ldmatrix, the k order of query_position or
// e4m3_position) feeds two MMAs; the B fragments are the raw e4m3 bytes of the stage converted
// to f16 in registers (one cvt per pair, exact; e4m3 MMAs on the raw bytes for fp8 q on the
// uniform layout on sm_90a at multiples of 32 heads: kE4m3Scores). The packed scales multiply each
// 64-dim group's partial sums, the packed rope group is bf16 as stored. Each warp then keeps one n
// tile, adding its partner's partial sums (part 0's first) through shared memory. Softmax: a thread
// holds 2 heads x 2 entries per m tile; the lazy segment reference (decode_lazy_softmax.cuh), per
// head, with the tile maxima and the segment sums met in shared memory in warp order. P goes to
// shared memory (f16; bf16 for bf16 values). Values: O = P V. Warp w accumulates dims 64w .. 64w +
// 63 (kPvDims) of all heads: A fragments of P by ldmatrix, B fragments of V by ldmatrix.trans of
// the stage (e4m3: a byte permute splits a register into even and odd dims, one cvt each); the
// packed scales ride on P per entry. The folded total (whole rows, prefix items) is kept in
// registers.
//
// The generated prologue defines namespace smla::cfg (see codegen/kernel_source.cpp).
#pragma once

#include "decode_heads_m_scores.cuh"
#include "decode_heads_m_values.cuh"
#include "decode_lazy_softmax.cuh"
#include "decode_loop.cuh"

namespace smla {
namespace decode {

// ---- the path ---------------------------------------------------------------------------------

using PerHead = float[kMTiles][2];  // per head of the thread: [m tile][row half]

// The heads-on-M policy of run_tiles (decode_loop.cuh). The folded total (whole rows, prefix
// items) and its (max, sum) per head are in registers: every thread of a head folds the same
// values, so each keeps its own copy.
// NOTE: the arrays are locals of run_cta, each on its own, and the policy refers to them: ptxas'
// code depends on when the compiler promotes each array to registers, which one object holding
// them all would delay to the last of them.
struct HeadsOnM {
  static constexpr bool kSplitItems = true;
  static constexpr bool kFreshTilesExact = true;  // lazy_softmax: a fresh tile goes exact

  unsigned char* smem;
  const Lanes& t;
  float* maxima;  // [head][warp]
  float* sums;    // [head][warp]
  Accumulators& acc;
  float (&total)[kMTiles][kPvNTiles][4];
  PerHead& seg_max;  // the segment's reference
  PerHead& seg_sum;  // this thread's share of the segment's sums
  PerHead& total_max;
  PerHead& total_sum;
  PerHead& factor;  // the score factors of the thread's heads
  ValueScales<kPvGroups>& value_scales;
  // A tile's scratch: its scores, their partial sums, the probabilities, the heads' rescale
  // factors, and a fold's steps.
  float (&x)[kMTiles][4];
  float (&partial)[kMTiles][2][4];
  float (&prob)[kMTiles][4];
  PerHead& rescale;
  float (&exact)[4];
  FoldStep (&step)[kMTiles][2];

  SMLA_DEVICE void init(const DecodeParams&) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < kPvNTiles; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          acc.o[mt][nt][e] = 0.0f;
          if (kFolds) total[mt][nt][e] = 0.0f;
        }
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        seg_max[mt][h] = total_max[mt][h] = neg_inf();
        seg_sum[mt][h] = total_sum[mt][h] = 0.0f;
      }
  }

  SMLA_DEVICE void start(const DecodeParams& p, const WorkItem& w) {
    load_query_tile<kE4m3Scores>(p, smem, w.row, w.head_group);
    __syncthreads();
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) factor[mt][h] = score_factor(p, smem, t.head(mt, h));
  }

  SMLA_DEVICE void landed() {}

  // The warp's scores of the tile in `stage` (exchange_scores), in log2 units, -inf for invalid
  // entries.
  SMLA_DEVICE void scores(const DecodeParams&, int stage) {
    if (kBf16Kv) {
      bf16_scores(smem, t, stage, partial);
    } else {
      fp8_scores(smem, t, stage, partial);
    }
    exchange_scores(smem, t, partial, x);
    const u8* valid = smem + kGeo.valid_offset + stage * kTileEntries;
    const bool valid0 = valid[t.score_entry(0)] != 0, valid1 = valid[t.score_entry(1)] != 0;
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const bool ok = (e & 1) ? valid1 : valid0;
        x[mt][e] = ok ? x[mt][e] * factor[mt][e >> 1] : neg_inf();
      }
  }

  SMLA_DEVICE void softmax(bool fresh) { lazy_softmax(*this, fresh); }

  SMLA_DEVICE void scale_values(int j, float f) { scale_group(acc, j, f); }

  SMLA_DEVICE void values(int stage, bool fresh) {
    const auto scale = [&](int j, float f) { scale_values(j, f); };
    if (kPacked) prepare_value_scales(smem, t, stage, fresh, value_scales, scale);
    accumulate_values(smem, t, stage, acc);
  }

  // ---- lazy_softmax's steps: a thread's scores are 2 heads x 2 entries per m tile

  SMLA_DEVICE void lazy_pass(bool& raise) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float m = seg_max[mt][e >> 1];
        raise = raise || x[mt][e] > m + kLazyMargin;
        prob[mt][e] = x[mt][e] == neg_inf() ? 0.0f : exp2_approx(x[mt][e] - m);
      }
      store_probabilities(smem, t, mt, 0, prob[mt][0], prob[mt][1]);
      store_probabilities(smem, t, mt, 1, prob[mt][2], prob[mt][3]);
    }
  }

  SMLA_DEVICE void add_lazy() {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        seg_sum[mt][h] = __fadd_rn(__fadd_rn(seg_sum[mt][h], prob[mt][2 * h]), prob[mt][2 * h + 1]);
      }
  }

  // The tile maxima per head: over the thread's quad, then the warps in order (read_slots).
  SMLA_DEVICE void write_maxima() {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float v = quad_max(fmaxf(x[mt][2 * h], x[mt][2 * h + 1]));
        if (t.c == 0) maxima[t.head(mt, h) * kWarps + t.warp] = v;
      }
  }

  // A head's reference moves on its own scores only, so that its bits do not depend on the
  // other heads of its CTA (narrow splits).
  SMLA_DEVICE void move_references() {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float tile_max = read_slots<true>(maxima, t.head(mt, h));
        rescale[mt][h] = move_reference<true>(seg_max[mt][h], tile_max);
      }
  }

  SMLA_DEVICE void exact_pass() {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) exact[e] = probability(x[mt][e], seg_max[mt][e >> 1]);
      store_probabilities(smem, t, mt, 0, exact[0], exact[1]);
      store_probabilities(smem, t, mt, 1, exact[2], exact[3]);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        seg_sum[mt][h] = __fadd_rn(
            __fadd_rn(__fmul_rn(seg_sum[mt][h], rescale[mt][h]), exact[2 * h]), exact[2 * h + 1]);
      }
    }
  }

  SMLA_DEVICE void rescale_values() {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < kPvNTiles; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc.o[mt][nt][e] *= rescale[mt][e >> 1];
  }

  // ---- segments and results

  // The segment's sum per head: the thread's sums over its quad, then the warps in order.
  SMLA_DEVICE void end_segment() {
    const auto scale = [&](int j, float f) { scale_values(j, f); };
    if (kPacked) finish_value_scales(t, value_scales, scale);
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float v = quad_sum(seg_sum[mt][h]);
        if (t.c == 0) sums[t.head(mt, h) * kWarps + t.warp] = v;
      }
    __syncthreads();
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) seg_sum[mt][h] = read_slots<false>(sums, t.head(mt, h));
  }

  SMLA_DEVICE void fold(int, bool) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        step[mt][h] =
            fold_state(total_max[mt][h], total_sum[mt][h], seg_max[mt][h], seg_sum[mt][h]);
        seg_max[mt][h] = neg_inf();
        seg_sum[mt][h] = 0.0f;
      }
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < kPvNTiles; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          total[mt][nt][e] = fold_value(total[mt][nt][e], acc.o[mt][nt][e], step[mt][e >> 1]);
          acc.o[mt][nt][e] = 0.0f;
        }
  }

  SMLA_DEVICE void folded_total(int, int) {}  // total_max, total_sum

  SMLA_DEVICE void segment_total(int count) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        total_max[mt][h] = seg_max[mt][h];
        total_sum[mt][h] = count > 0 ? seg_sum[mt][h] : 0.0f;
      }
  }

  SMLA_DEVICE void store_partial_stats(const DecodeParams& p, const WorkItem& w) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (t.warp == 0 && t.c == 0) {
          float* ml = p.partial_ml + (w.item * kHeadsPerCta + t.head(mt, h)) * 2;
          ml[0] = total_max[mt][h];
          ml[1] = total_sum[mt][h];
        }
      }
  }

  SMLA_DEVICE void store_partial_values(const DecodeParams& p, const WorkItem& w) {
    if (kFolds && p.folds) {
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int nt = 0; nt < kPvNTiles; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc.o[mt][nt][e] = total[mt][nt][e];
    }
    float* out = p.partial_out + w.item * kHeadsPerCta * kHeadDim;
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float* row = out + t.head(mt, h) * kHeadDim;
        for_each_output(
            t, mt, h, [&](int nt, int e) { return acc.o[mt][nt][e]; },
            [&](int d, const float(&v)[4], int count) {
              if (count == 4) {
                *(float4*)(row + d) = make_float4(v[0], v[1], v[2], v[3]);
              } else {
                *(float2*)(row + d) = make_float2(v[0], v[1]);
              }
            });
      }
  }

  SMLA_DEVICE void store_output(const DecodeParams& p, const WorkItem& w) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int head = w.head_group * kHeadsPerCta + t.head(mt, h);
        if (head >= kNumHeads) continue;
        const float out_factor =
            output_factor(total_max[mt][h], total_sum[mt][h], sink_log2(p, head), p.out_scale);
        if (kWantLse && t.warp == 0 && t.c == 0) {
          p.lse[(i64)w.row * kNumHeads + head] = row_lse(total_max[mt][h], total_sum[mt][h]);
        }
        u16* out = (u16*)p.out + (i64)w.row * p.out_row_stride + (i64)head * p.out_head_stride;
        for_each_output(
            t, mt, h,
            [&](int nt, int e) {
              return __fmul_rn(kFolds ? total[mt][nt][e] : acc.o[mt][nt][e], out_factor);
            },
            [&](int d, const float(&v)[4], int count) {
              if (count == 4) {
                *(uint2*)(out + d) = make_uint2(pack_bf16x2(v[0], v[1]), pack_bf16x2(v[2], v[3]));
              } else {
                *(u32*)(out + d) = pack_bf16x2(v[0], v[1]);
              }
            });
      }
  }
};

SMLA_DEVICE void run_cta(const DecodeParams& p, unsigned char* smem, const WorkItem& w) {
  const Lanes t = make_lanes();
  float* maxima = (float*)(smem + kGeo.reduce_offset);
  Accumulators acc;
  float total[kMTiles][kPvNTiles][4];
  PerHead seg_max, seg_sum, total_max, total_sum, factor;
  ValueScales<kPvGroups> value_scales;
  float x[kMTiles][4];
  float partial[kMTiles][2][4];
  float prob[kMTiles][4];
  PerHead rescale;
  float exact[4];
  FoldStep step[kMTiles][2];
  HeadsOnM path{smem,      t,         maxima,  maxima + kHeadsPerCta * kWarps,
                acc,       total,     seg_max, seg_sum,
                total_max, total_sum, factor,  value_scales,
                x,         partial,   prob,    rescale,
                exact,     step};
  run_tiles(path, p, w);
}

}  // namespace decode
}  // namespace smla

#include "decode_entry.cuh"
