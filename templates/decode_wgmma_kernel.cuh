// The wgmma decode kernel (tile path wgmma, sm_90a only): the problem and outputs of
// decode_kernel.cuh with 64 heads per CTA the M of Hopper's warpgroup MMAs. With one segment a
// row (batch-variant mode's fast path) calls never split; with several (the default mode's tile)
// a call splits rows into items as the other kernels do (work_item), or walks whole rows, and a
// CTA of several segments folds each into a total kept in local memory (fold_segment), so a
// row's bits never depend on its batch. Design and measurements: docs/decode-kernel.md.
//
// The loop is decode_loop.cuh's (policy Wgmma below; a tile's steps in decode_wgmma_tile.cuh);
// per 64-entry tile, the gather ring of decode_common.cuh one tile ahead:
// 1. Every thread dequantizes a share of its entry from the raw stage into one bf16 tile in the
//    128-byte swizzle (e4m3 times its ue8m0 scale is exact in bf16; the packed rope is copied).
// 2. Warpgroup 0 computes S = Q K^T (64 heads x 64 entries over 32 k-steps, both operands in
//    shared memory) and the online softmax per head, and keeps P in bf16 registers; it stores
//    P and each head's rescale factor in shared memory for warpgroup 1.
// 3. Each warpgroup accumulates O = P V over 256 of the 512 dims, V being the same bf16 tile
//    read MN-major: warpgroup 0 with P from registers, warpgroup 1 from shared memory.
// With fp8 q on the uniform layout (kOperandStages) the gathered stage is itself the K operand:
// warpgroup 0 computes S in e4m3 products (16 k-steps) from it while warpgroup 1 converts the
// stage's values into an f16 tile for P V (step 1 leaves the chain), and P is f16. Not when the
// lse is asked for (compute_scores).
//
// The generated prologue defines namespace smla::cfg (see codegen/kernel_source.cpp).
#pragma once

#include "decode_loop.cuh"
#include "decode_wgmma_tile.cuh"

namespace smla {
namespace decode {

// ---- segments -----------------------------------------------------------------------------------

constexpr int kTotalQuads = kPvBlocks * 8;  // a thread's accumulators, four at a time

// The folded total of O between a CTA's segments: the thread's 128 accumulators in local memory,
// which the driver gives every resident thread on its own.
// NOTE: the CTA has neither the registers (O is 128 a thread) nor the shared memory (128 KB)
// to hold the total beside the segment's accumulators. Local memory needs no workspace and no
// ownership scheme: only the thread that stores a value loads it back, so program order is
// all the ordering there is. fold_segment reaches it through a pointer the compiler cannot
// follow, so that it stays in memory rather than in spilled registers.
struct LocalTotal {
  float4 quads[kTotalQuads];
};

// Folds the segment that ends here into the CTA's total (the combine kernel's fold,
// segment_fold.cuh, on the same values in the same order) and starts a fresh segment. After the
// CTA's last segment the folded total is left in `o`. Warpgroup 0 folds the heads'
// (max, sum) in `stats` [head][2] and hands each head's factors to warpgroup 1 through `steps`
// [head][2]. `stored`: whether an earlier segment was folded into `total`.
// NOTE: the total's (max, sum) stays in shared memory: the kernel has no register to spare.
template <bool kLast>
SMLA_DEVICE void fold_segment(const Lanes& t, float* stats, float* steps, float (&running_max)[2],
                              float (&sum)[2], float (&o)[kPvBlocks][32], LocalTotal& total,
                              bool stored) {
  if (t.group == 0) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float segment_sum = quad_sum(sum[h]);
      if (t.c == 0) {
        float* total_ml = stats + 2 * t.head(h);
        const FoldStep step = fold_state(total_ml[0], total_ml[1], running_max[h], segment_sum);
        steps[2 * t.head(h)] = step.total_factor;
        steps[2 * t.head(h) + 1] = step.segment_factor;
      }
      running_max[h] = neg_inf();
      sum[h] = 0.0f;
    }
  }
  // NOTE: the reads of the previous fold's steps came before this tile's first barrier.
  __syncthreads();
  FoldStep step[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) step[h] = {steps[2 * t.head(h)], steps[2 * t.head(h) + 1]};
  float4* stored_quads = total.quads;
  asm("" : "+l"(stored_quads));
#pragma unroll
  for (int k = 0; k < kTotalQuads; ++k) {
    // Quad k is accumulators 4j .. 4j + 3 of block nb; 4j + e is of head t.head(e >> 1)
    // (rescale_values).
    const int nb = k / 8, j = k % 8;
    float* acc = &o[nb][4 * j];
    float4 q = stored ? stored_quads[k] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    q.x = fold_value(q.x, acc[0], step[0]);
    q.y = fold_value(q.y, acc[1], step[0]);
    q.z = fold_value(q.z, acc[2], step[1]);
    q.w = fold_value(q.w, acc[3], step[1]);
    acc[0] = kLast ? q.x : 0.0f;
    acc[1] = kLast ? q.y : 0.0f;
    acc[2] = kLast ? q.z : 0.0f;
    acc[3] = kLast ? q.w : 0.0f;
    if (!kLast) stored_quads[k] = q;
  }
}

// ---- the path ---------------------------------------------------------------------------------

// The wgmma policy of run_tiles (decode_loop.cuh). Warpgroup 0 computes S and P (its scores step
// ends with P, which it keeps in registers for its own value product), warpgroup 1 takes P from
// shared memory; the softmax step has nothing left to do. The folded total is in local memory
// (LocalTotal), its (max, sum) in shared memory; the last segment's fold leaves the total in the
// accumulators (folded_total).
// NOTE: the arrays are locals of run_cta, each on its own, and the policy refers to them: ptxas'
// code depends on when the compiler promotes each array to registers, which one object holding
// them all would delay to the last of them.
struct Wgmma {
  static constexpr bool kSplitItems = kFolds;  // with one segment a row, calls never split

  unsigned char* smem;  // the map's base (1024-byte aligned)
  const Lanes& t;
  unsigned char* query;
  unsigned char* tile16;  // bf16 keys and values, or f16 values
  unsigned char* probs_smem;
  float* rescales;  // [head]
  float* stats;     // [head][max, sum]
  float* steps;     // [head][fold factors]
  float (&sinks)[2];
  float (&o)[kPvBlocks][32];
  float (&running_max)[2];  // warpgroup 0's
  float (&sum)[2];          // warpgroup 0's
  LocalTotal& total;        // the folded total (p.folds): O per thread
  // A tile's P (warpgroup 0's A fragments) and the heads' rescale factors.
  u32 (&probs)[4][4];
  float (&rescale)[2];
  u64 values_b, probs_a;  // the value product's descriptors (set by start)

  SMLA_DEVICE void init(const DecodeParams&) {}  // the state is set after the query's copies

  SMLA_DEVICE void start(const DecodeParams& p, const WorkItem& w) {
    load_query(p, query, w.row, w.head_group);
    // q's copies: the loop's first wait covers them, and the fence after its first dequantization
    // (or its wait, with kOperandStages) publishes them to the products; this fence publishes the
    // converted fp8 q's stores.
    cp_async_commit();
    fence_proxy_async();
    // NOTE: loaded here, not in the epilogue, where the load would wait behind the output stores.
    sinks[0] = sink_log2(p, w.head_group * kHeadsPerCta + t.head(0));
    sinks[1] = sink_log2(p, w.head_group * kHeadsPerCta + t.head(1));
#pragma unroll
    for (int nb = 0; nb < kPvBlocks; ++nb)
#pragma unroll
      for (int i = 0; i < 32; ++i) o[nb][i] = 0.0f;
    running_max[0] = running_max[1] = neg_inf();
    sum[0] = sum[1] = 0.0f;
    if (kFolds && t.group == 0 && t.c == 0) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        stats[2 * t.head(h)] = neg_inf();
        stats[2 * t.head(h) + 1] = 0.0f;
      }
    }
    const u32 values = smem_u32(tile16) + t.group * kPvBlocks * kBlockBytes;
    values_b = sw128_descriptor(values, kBlockBytes, 1024);
    probs_a = sw128_descriptor(smem_u32(probs_smem), 16, 1024);
  }

  SMLA_DEVICE void landed() {
    if (kOperandStages) fence_proxy_async();  // the products read the stage's copies
  }

  SMLA_DEVICE void scores(const DecodeParams& p, int stage) {
    const unsigned char* raw = smem + kGeo.raw_offset + stage * kTileEntries * kGeo.entry_bytes;
    if (!kOperandStages) {
      dequantize_tile(smem, tile16, stage);
      fence_proxy_async();
      __syncthreads();
    }
    if (t.group == 0) {
      float s[32];
      compute_scores(smem_u32(query), smem_u32(kOperandStages ? raw : tile16), s);
      softmax_tile(t, smem + kGeo.valid_offset + stage * kTileEntries, p.score_scale_log2, s,
                   running_max, sum, probs, rescale);
      store_probabilities(probs_smem, t, probs);
      if (t.c == 0) {
        rescales[t.head(0)] = rescale[0];
        rescales[t.head(1)] = rescale[1];
      }
      fence_proxy_async();
      // With kOperandStages warpgroup 0 also waits for warpgroup 1's values.
      if (kOperandStages) {
        named_barrier_sync(1, 256);
      } else {
        named_barrier_arrive(1, 256);
      }
    } else {
      if (kOperandStages) {
        convert_values(raw, tile16, threadIdx.x - 128);
        fence_proxy_async();
      }
      named_barrier_sync(1, 256);
      rescale[0] = rescales[t.head(0)];
      rescale[1] = rescales[t.head(1)];
    }
  }

  SMLA_DEVICE void softmax(bool) {}  // P came with the scores

  SMLA_DEVICE void values(int, bool) {
    rescale_values(o, rescale);
    // O += P V: k-step ks is entries 16 ks .. 16 ks + 15, block nb 64 of the group's dims.
    wgmma_fence();
    if (t.group == 0) {
#pragma unroll
      for (int ks = 0; ks < 4; ++ks)
#pragma unroll
        for (int nb = 0; nb < kPvBlocks; ++nb) {
          wgmma_rs<1, kOperandStages>(
              o[nb], probs[ks], advance_descriptor(values_b, nb * kBlockBytes + ks * 16 * 128));
        }
    } else {
#pragma unroll
      for (int ks = 0; ks < 4; ++ks)
#pragma unroll
        for (int nb = 0; nb < kPvBlocks; ++nb) {
          wgmma_ss<1, kOperandStages>(
              o[nb], advance_descriptor(probs_a, ks * 32),
              advance_descriptor(values_b, nb * kBlockBytes + ks * 16 * 128), 1);
        }
    }
    wgmma_commit();
    wgmma_wait<0>();
#pragma unroll
    for (int nb = 0; nb < kPvBlocks; ++nb) pin(o[nb]);
  }

  // ---- segments and results

  SMLA_DEVICE void end_segment() {}  // the sums are summed where they are folded or stored

  // A segment before the walk's last; the last one is folded by folded_total.
  SMLA_DEVICE void fold(int folds, bool last) {
    if (!last) fold_segment<false>(t, stats, steps, running_max, sum, o, total, folds > 0);
  }

  // `folds` counts the last segment too: an earlier one was folded into `total` if it is above 1.
  SMLA_DEVICE void folded_total(int folds, int tiles) {
    if (tiles > 0) fold_segment<true>(t, stats, steps, running_max, sum, o, total, folds > 1);
    // NOTE: a row without entries walks no tile, so no wait has covered q's copies yet; they
    // must land before O's stores take their place (and before the CTA leaves).
    cp_async_wait<0>();
  }

  // The one segment's (max, sum) to `stats` for the output (split partials take them from the
  // registers).
  SMLA_DEVICE void segment_total(int) {
    cp_async_wait<0>();  // as in folded_total
    if (!kFolds && t.group == 0) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float segment_sum = quad_sum(sum[h]);
        if (t.c == 0) {
          stats[2 * t.head(h)] = running_max[h];
          stats[2 * t.head(h) + 1] = segment_sum;
        }
      }
    }
  }

  // Split mode's partial of the CTA's item for the combine kernel: each head's (max, sum),
  // folded in `stats` or the one segment's ...
  SMLA_DEVICE void store_partial_stats(const DecodeParams& p, const WorkItem& w) {
    if (t.group == 0) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float segment_sum = quad_sum(sum[h]);
        if (t.c == 0) {
          float* ml = p.partial_ml + (w.item * kHeadsPerCta + t.head(h)) * 2;
          ml[0] = p.folds ? stats[2 * t.head(h)] : running_max[h];
          ml[1] = p.folds ? stats[2 * t.head(h) + 1] : segment_sum;
        }
      }
    }
  }

  // ... and O.
  SMLA_DEVICE void store_partial_values(const DecodeParams& p, const WorkItem& w) {
    float* out = p.partial_out + w.item * kHeadsPerCta * kHeadDim;
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int nb = 0; nb < kPvBlocks; ++nb)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const int dim = t.group * kPvBlocks * 64 + 64 * nb + 8 * j + 2 * t.c;
          *(float2*)(out + t.head(h) * kHeadDim + dim) =
              make_float2(o[nb][4 * j + 2 * h], o[nb][4 * j + 2 * h + 1]);
        }
  }

  SMLA_DEVICE void store_output(const DecodeParams& p, const WorkItem& w) {
    __syncthreads();
    // O in bf16 takes the query tile's place (the last products are done; an e4m3 query tile is
    // half as large, and O runs on into the 16-bit tile), so that the rows leave in 16-byte
    // stores, whole 512-byte runs per warp (the accumulators' 4-byte pieces would half-fill their
    // sectors).
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int head = w.head_group * kHeadsPerCta + t.head(h);
      const float total_max = stats[2 * t.head(h)], total_sum = stats[2 * t.head(h) + 1];
      const float out_factor = output_factor(total_max, total_sum, sinks[h], p.out_scale);
      if (kWantLse && t.group == 0 && t.c == 0 && head < kNumHeads) {
        p.lse[(i64)w.row * kNumHeads + head] = row_lse(total_max, total_sum);
      }
#pragma unroll
      for (int nb = 0; nb < kPvBlocks; ++nb)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const float v0 = __fmul_rn(o[nb][4 * j + 2 * h], out_factor);
          const float v1 = __fmul_rn(o[nb][4 * j + 2 * h + 1], out_factor);
          const int dim = t.group * kPvBlocks * 64 + 64 * nb + 8 * j + 2 * t.c;
          *(u32*)(query + swizzled(t.head(h), dim)) = pack_bf16x2(v0, v1);
        }
    }
    // Each warp reads back only the block it staged (16 heads x 256 dims), one head's 512 bytes
    // per instruction, so its own barrier orders it and warps leave as they finish.
    __syncwarp();
    const int dim = t.group * kPvBlocks * 64 + 8 * (threadIdx.x % 32);
#pragma unroll 4
    for (int k = 0; k < 16; ++k) {
      const int h = 16 * t.warp + k;
      const int head = w.head_group * kHeadsPerCta + h;
      u16* out = (u16*)p.out + (i64)w.row * p.out_row_stride + (i64)head * p.out_head_stride;
      if (head < kNumHeads) *(uint4*)(out + dim) = *(const uint4*)(query + swizzled(h, dim));
    }
  }
};

SMLA_DEVICE void run_cta(const DecodeParams& p, unsigned char* smem, const WorkItem& w) {
  // The map starts at the first 1024-byte boundary (wgmma_geometry).
  unsigned char* base = smem + ((1024u - (smem_u32(smem) & 1023u)) & 1023u);
  float* rescales = (float*)(base + kGeo.reduce_offset);
  Lanes t;
  // NOTE: a value the compiler knows to be warp-uniform (a broadcast): wgmma in branches on it
  // stays asynchronous, where a branch on threadIdx makes ptxas serialize the products.
  t.group = __shfl_sync(0xffffffffu, (int)threadIdx.x / 128, 0);
  t.warp = threadIdx.x / 32 % 4;
  t.g = threadIdx.x % 32 / 4;
  t.c = threadIdx.x % 4;
  float sinks[2];
  float o[kPvBlocks][32];
  float running_max[2], sum[2];
  LocalTotal total;
  u32 probs[4][4];
  float rescale[2];
  Wgmma path{base,
             t,
             base + kGeo.query_offset,
             base + kGeo.keys_offset,
             base + kGeo.prob_offset,
             rescales,
             rescales + kHeadsPerCta,
             rescales + 3 * kHeadsPerCta,
             sinks,
             o,
             running_max,
             sum,
             total,
             probs,
             rescale,
             0ull,
             0ull};
  run_tiles(path, p, w);
}

}  // namespace decode
}  // namespace smla

#include "decode_entry.cuh"
