// The wgmma decode kernel (tile path wgmma, sm_90a only): the problem and outputs of
// decode_kernel.cuh with 64 heads per CTA the M of Hopper's warpgroup MMAs. With one segment a
// row (batch-variant mode's fast path) calls never split; with several (the default mode's tile)
// a call splits rows into items as the other kernels do (work_item), or walks whole rows, and a
// CTA of several segments folds each into a total kept in local memory (fold_segment), so a
// row's bits never depend on its batch. Design and measurements: docs/decode-kernel.md.
//
// Per 64-entry tile, the gather ring of decode_common.cuh one tile ahead:
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

#include "decode_common.cuh"
#include "wgmma.cuh"

namespace smla {
namespace decode {

static_assert(kWgmma, "the wgmma template");
static_assert(kHeadsPerCta == 64 && kWarps == 8 && kTileEntries == 64,
              "64 heads per CTA, two warpgroups, 64-entry tiles");
static_assert(kStages == 2, "two stages");
static_assert(!kBf16Kv, "the fp8 layouts");
static_assert(kGeo.prob_offset - kGeo.query_offset >= kHeadsPerCta * kHeadDim * 2,
              "O in bf16 is staged where the query and the 16-bit tile are");

constexpr u32 kBlockBytes = 64 * 128;  // 64 rows x 128 bytes: one column block of an operand
constexpr int kRawChunks = kGeo.chunks_per_entry;  // 16-byte chunks of a raw entry: 36 or 32
constexpr int kPvBlocks = 4;                       // 64-dim blocks of a warpgroup's 256 value dims

// Where value (row, dim) of a bf16 operand of 64 rows sits: column blocks of 64 dims, rows of
// 128 bytes, chunk i of row r at chunk i ^ (r % 8) (the swizzle the descriptors name).
SMLA_DEVICE u32 swizzled(int row, int dim) {
  return (dim >> 6) * kBlockBytes + row * 128 + ((((dim >> 3) & 7) ^ (row & 7)) << 4) +
         (dim & 7) * 2;
}

// bf16x2 holding 2^k twice, for k in [-126, 127].
SMLA_DEVICE u32 bf16x2_pow2(int k) {
  const u32 half = (u32)(k + 127) << 7;
  return half | (half << 16);
}

// The CTA's 64 query heads in bf16 (fp8 q converted exactly; its scale is in the score factor),
// or with kOperandStages as q's e4m3 bytes in the operand layout of the stages. Heads past
// kNumHeads are zero: their rows are computed and never stored. bf16 q and the e4m3 bytes are
// copied with cp.async, so that they land beside the first tile's gather; the caller commits
// the group.
SMLA_DEVICE void load_query(const DecodeParams& p, unsigned char* query, int row, int head_group) {
  constexpr int kChunkDims = kOperandStages ? 16 : 8;  // dims per 16-byte chunk of the tile
  constexpr int kChunks = kHeadDim / kChunkDims;
  for (int i = threadIdx.x; i < kHeadsPerCta * kChunks; i += kThreads) {
    const int h = i / kChunks, chunk = i % kChunks;
    const int head = head_group * kHeadsPerCta + h;
    const bool present = head < kNumHeads;
    const i64 offset =
        present ? (i64)row * p.q_row_stride + (i64)head * p.q_head_stride + chunk * kChunkDims : 0;
    // Absent heads are zero-filled (the source is only some address of q).
    if (kOperandStages) {
      cp_async_16(smem_u32(query + operand_chunk_offset(h, chunk)), (const u8*)p.q + offset,
                  present ? 16u : 0u);
      continue;
    }
    unsigned char* to = query + swizzled(h, chunk * 8);
    if (!kQFp8) {
      cp_async_16(smem_u32(to), (const u16*)p.q + offset, present ? 16u : 0u);
      continue;
    }
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (present) {
      const uint2 x = *(const uint2*)((const u8*)p.q + offset);
      e4m3x4_to_bf16x2(x.x, v.x, v.y);
      e4m3x4_to_bf16x2(x.y, v.z, v.w);
    }
    *(uint4*)to = v;
  }
}

// A thread's share of one entry: its raw chunks 4j + first (j = 0, 1, ...) from `raw` (chunk
// `first`'s place) to the entry's 128-byte rows at `row`. Chunk 4j + first is dims
// 64j + 16 first .. + 15: 8-dim chunks 2 first (`low`) and 2 first + 1 (`high`) of column block
// j, swizzled. e4m3 becomes bf16 times 2^-120 exactly, then times 2^(s - 7) for the packed
// scale byte s of group j (2^120 for the uniform layout); bf16 holds factors up to 2^127, so
// with kTwoSteps bytes above 134 take a second factor.
template <bool kTwoSteps>
SMLA_DEVICE void dequantize_share(const unsigned char* raw, unsigned char* row, u32 low, u32 high,
                                  u32 rope, uint2 scales) {
#pragma unroll
  for (int j = 0; j < kRawChunks / 4; ++j) {
    const uint4 x = *(const uint4*)(raw + 64 * j);
    if (kPacked && j >= kRopeDim0 / 64) {  // bf16 rope dims 448 + 32 (j - 7) + 8 first, as stored
      *(uint4*)(row + 7 * kBlockBytes + ((rope ^ (4 * (j - 7))) << 4)) = x;
      continue;
    }
    const u32 scale = (j < 4 ? scales.x >> (8 * j) : scales.y >> (8 * (j - 4))) & 0xffu;
    const int exponent = kPacked ? (int)scale - 7 : 120;
    const u32 words[4] = {x.x, x.y, x.z, x.w};
    u32 out[8];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      out[2 * k] = e4m3x2_to_bf16x2_scaled(words[k], kBytes01);
      out[2 * k + 1] = e4m3x2_to_bf16x2_scaled(words[k], kBytes23);
    }
    const u32 factor = bf16x2_pow2(kTwoSteps ? min(exponent, 127) : exponent);
#pragma unroll
    for (int k = 0; k < 8; ++k) out[k] = mul_bf16x2(out[k], factor);
    if (kTwoSteps) {
      const u32 rest = bf16x2_pow2(max(exponent - 127, 0));
#pragma unroll
      for (int k = 0; k < 8; ++k) out[k] = mul_bf16x2(out[k], rest);
    }
    *(uint4*)(row + j * kBlockBytes + (low << 4)) = make_uint4(out[0], out[1], out[2], out[3]);
    *(uint4*)(row + j * kBlockBytes + (high << 4)) = make_uint4(out[4], out[5], out[6], out[7]);
  }
}

// The raw stage to the bf16 tile. Thread t takes entry t % 64 and its raw chunks t / 64 + 4j, so
// one scale byte serves a chunk; eight consecutive threads meet eight
// entries, whose reads (stored_chunk) and writes (the swizzle) miss each other's banks.
SMLA_DEVICE void dequantize_tile(const unsigned char* smem, unsigned char* keys, int stage) {
  const int e = threadIdx.x % kTileEntries;
  const u32 first = threadIdx.x / kTileEntries;
  // stored_chunk(e, 4j + first) is 4j + (first ^ ((e >> 1) & 3)) for the fp8 layouts.
  const unsigned char* raw = smem + kGeo.raw_offset +
                             (stage * kTileEntries + e) * kGeo.entry_bytes +
                             16 * (first ^ ((e >> 1) & 3));
  const u32 low = (2 * first) ^ (e & 7), high = (2 * first + 1) ^ (e & 7), rope = first ^ (e & 7);
  uint2 scales = make_uint2(0u, 0u);  // the packed scale bytes 0..6 (byte 7 is padding)
  bool large = false;                 // a scale byte above 134: not in any cache seen, but allowed
  if (kPacked) {
    scales = *(const uint2*)(smem + kGeo.scale_offset + (stage * kTileEntries + e) * 8);
    // A byte above 134 has bit 7 set and its low 7 bits >= 7, which their sum with 0x79 shows
    // in bit 7 (no carry leaves a byte).
    const u32 x = scales.x, y = scales.y & 0x00ffffffu;
    const u32 above =
        (x & ((x & 0x7f7f7f7fu) + 0x79797979u)) | (y & ((y & 0x7f7f7f7fu) + 0x79797979u));
    large = (above & 0x80808080u) != 0;
  }
  if (large) {
    dequantize_share<true>(raw, keys + e * 128, low, high, rope, scales);
  } else {
    dequantize_share<false>(raw, keys + e * 128, low, high, rope, scales);
  }
}

// With kOperandStages, warpgroup 1's thread u (0..127) converts the e4m3 values of entry u % 64,
// dims 256 (u / 64) .. + 255, from the operand stage into the f16 value tile (swizzled), exactly:
// kv_scale is in the output factor. Eight consecutive threads meet eight entries, whose 16-byte
// reads and writes (both swizzled by the entry) miss each other's banks.
SMLA_DEVICE void convert_values(const unsigned char* stage, unsigned char* values, int u) {
  const int e = u % kTileEntries, first = 16 * (u / kTileEntries);
#pragma unroll 4
  for (int c = first; c < first + 16; ++c) {  // chunk c: dims 16c .. 16c + 15
    const uint4 x = *(const uint4*)(stage + operand_chunk_offset(e, c));
    const u32 words[4] = {x.x, x.y, x.z, x.w};
    u32 out[8];
#pragma unroll
    for (int k = 0; k < 4; ++k) e4m3x4_to_f16x2(words[k], out[2 * k], out[2 * k + 1]);
    *(uint4*)(values + swizzled(e, 16 * c)) = make_uint4(out[0], out[1], out[2], out[3]);
    *(uint4*)(values + swizzled(e, 16 * c + 8)) = make_uint4(out[4], out[5], out[6], out[7]);
  }
}

// S = Q K^T for the CTA's 64 heads and the tile's 64 entries (warpgroup 0): bf16 operands in
// 16-dim k-steps, or e4m3 ones in 32-dim k-steps with kOperandStages (both 32 bytes a row).
// Accumulator 4j + e of a thread holds head 16 warp + g + 8 (e >> 1) and entry 8j + 2c + (e & 1).
// NOTE: wgmma's e4m3 products keep the running sum in about 13 mantissa bits, so the scores move
// by up to ~2e-3 of their magnitude: out stays within its tolerance (3.6e-3 at 8x the tests'
// logits), the lse would not, so kOperandStages needs the lse not asked for (docs/PERFORMANCE.md,
// "e4m3 scores").
SMLA_DEVICE void compute_scores(u32 query, u32 keys, float (&s)[32]) {
  const u64 a = sw128_descriptor(query, 16, 1024), b = sw128_descriptor(keys, 16, 1024);
#pragma unroll
  for (int i = 0; i < 32; ++i) s[i] = 0.0f;
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kHeadDim / (kOperandStages ? 32 : 16); ++kk) {
    const u32 offset = (kk / 4) * kBlockBytes + (kk % 4) * 32;
    if (kOperandStages) {
      wgmma_e4m3_ss(s, advance_descriptor(a, offset), advance_descriptor(b, offset),
                    kk > 0 ? 1 : 0);
    } else {
      wgmma_ss<0>(s, advance_descriptor(a, offset), advance_descriptor(b, offset), kk > 0 ? 1 : 0);
    }
  }
  wgmma_commit();
  wgmma_wait<0>();
  pin(s);
}

struct Lanes {
  int group, warp, g, c;  // warpgroup, warp in it, fragment row group and column pair
  SMLA_DEVICE int head(int half) const { return 16 * warp + g + 8 * half; }
};

// The online softmax of warpgroup 0 over one tile: masks invalid entries, moves each head's
// reference, turns s into P (A fragments of the 4 k-steps of P V: f16 with kOperandStages, else
// bf16), and rescales the running sums. Returns the heads' rescale factors (1 where the
// reference stays).
// NOTE: the lazy reference of the other kernels (kLazyMargin): a head's reference moves only
// when a score passes it by the margin, so P <= 2^15 (f16, bf16 and the fp32 sums hold it) and
// most tiles rescale nothing: 128 multiplies per thread and tile less.
SMLA_DEVICE void softmax_tile(const Lanes& t, const u8* valid, float factor, float (&s)[32],
                              float (&running_max)[2], float (&sum)[2], u32 (&probs)[4][4],
                              float (&rescale)[2]) {
  float tile_max[2] = {neg_inf(), neg_inf()};
#pragma unroll
  for (int j = 0; j < 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const bool ok = valid[8 * j + 2 * t.c + (e & 1)] != 0;
      s[4 * j + e] = ok ? s[4 * j + e] * factor : neg_inf();
      tile_max[e >> 1] = fmaxf(tile_max[e >> 1], s[4 * j + e]);
    }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float m = quad_max(tile_max[h]);
    const bool raises = running_max[h] == neg_inf() || m > running_max[h] + kLazyMargin;
    rescale[h] = !raises                       ? 1.0f
                 : running_max[h] == neg_inf() ? 0.0f
                                               : exp2_approx(running_max[h] - m);
    if (raises) running_max[h] = m;
  }
  float tile_sum[2] = {0.0f, 0.0f};
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    const float x = s[i];
    s[i] = x == neg_inf() ? 0.0f : exp2_approx(x - running_max[(i >> 1) & 1]);
    tile_sum[(i >> 1) & 1] += s[i];
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) sum[h] = sum[h] * rescale[h] + tile_sum[h];
#pragma unroll
  for (int ks = 0; ks < 4; ++ks)
#pragma unroll
    for (int r = 0; r < 4; ++r)
      probs[ks][r] = kOperandStages ? pack_f16x2(s[8 * ks + 2 * r], s[8 * ks + 2 * r + 1])
                                    : pack_bf16x2(s[8 * ks + 2 * r], s[8 * ks + 2 * r + 1]);
}

// Accumulator 4j + e of block nb: head t.head(e >> 1), dim 256 group + 64 nb + 8j + 2c + (e & 1).
SMLA_DEVICE void rescale_values(float (&o)[kPvBlocks][32], const float (&rescale)[2]) {
  // NOTE: most tiles move no maximum; a warp whose heads all keep theirs skips 128 multiplies.
  if (__all_sync(0xffffffffu, rescale[0] == 1.0f && rescale[1] == 1.0f)) return;
#pragma unroll
  for (int nb = 0; nb < kPvBlocks; ++nb)
#pragma unroll
    for (int i = 0; i < 32; ++i) o[nb][i] *= rescale[(i >> 1) & 1];
}

// P's k-step ks fragments at rows (heads) and columns (entries) of a 64 x 64 bf16 operand.
SMLA_DEVICE void store_probabilities(unsigned char* probs_smem, const Lanes& t,
                                     const u32 (&probs)[4][4]) {
#pragma unroll
  for (int ks = 0; ks < 4; ++ks)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int entry = 16 * ks + 8 * (r >> 1) + 2 * t.c;
      *(u32*)(probs_smem + swizzled(t.head(r & 1), entry)) = probs[ks][r];
    }
}

// ---- segments -----------------------------------------------------------------------------------

constexpr bool kFolds = kGeo.segments > 1;
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

// Split mode's partial of the CTA's item for the combine kernel: each head's (max, sum), folded
// in `stats` or the one segment's, and O unless the item had no nonempty tile (its max is -inf;
// the combine kernel never reads those values).
SMLA_DEVICE void store_partial(const DecodeParams& p, const WorkItem& w, const Lanes& t,
                               const float* stats, const float (&running_max)[2],
                               const float (&sum)[2], const float (&o)[kPvBlocks][32],
                               bool any_tile) {
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
  if (!any_tile) return;
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

SMLA_DEVICE void run_cta(const DecodeParams& p, unsigned char* smem, const WorkItem& w) {
  // The map starts at the first 1024-byte boundary (wgmma_geometry).
  unsigned char* base = smem + ((1024u - (smem_u32(smem) & 1023u)) & 1023u);
  unsigned char* query = base + kGeo.query_offset;
  unsigned char* tile16 = base + kGeo.keys_offset;  // bf16 keys and values, or f16 values
  unsigned char* probs_smem = base + kGeo.prob_offset;
  float* rescales = (float*)(base + kGeo.reduce_offset);  // [head]
  float* stats = rescales + kHeadsPerCta;                 // [head][max, sum]
  float* steps = stats + 2 * kHeadsPerCta;                // [head][fold factors]
  Lanes t;
  // NOTE: a value the compiler knows to be warp-uniform (a broadcast): wgmma in branches on it
  // stays asynchronous, where a branch on threadIdx makes ptxas serialize the products.
  t.group = __shfl_sync(0xffffffffu, (int)threadIdx.x / 128, 0);
  t.warp = threadIdx.x / 32 % 4;
  t.g = threadIdx.x % 32 / 4;
  t.c = threadIdx.x % 4;

  const TileWalk walk = make_walk(w.length0, w.length1, w.begin, w.end);
  GatherRing ring;
  ring.start(p, base, walk, w.length0, w.length1, w.row);
  load_query(p, query, w.row, w.head_group);
  // q's copies: the loop's first wait covers them, and the fence after its first dequantization
  // (or its wait, with kOperandStages) publishes them to the products; this fence publishes the
  // converted fp8 q's stores.
  cp_async_commit();
  fence_proxy_async();
  // NOTE: loaded here, not in the epilogue, where the load would wait behind the output stores.
  const float sinks[2] = {sink_log2(p, w.head_group * kHeadsPerCta + t.head(0)),
                          sink_log2(p, w.head_group * kHeadsPerCta + t.head(1))};

  float o[kPvBlocks][32];
#pragma unroll
  for (int nb = 0; nb < kPvBlocks; ++nb)
#pragma unroll
    for (int i = 0; i < 32; ++i) o[nb][i] = 0.0f;
  float running_max[2] = {neg_inf(), neg_inf()}, sum[2] = {0.0f, 0.0f};  // warpgroup 0's
  // The folded total (p.folds): its (max, sum) per head in `stats`, O per thread.
  LocalTotal total;
  if (kFolds && t.group == 0 && t.c == 0) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      stats[2 * t.head(h)] = neg_inf();
      stats[2 * t.head(h) + 1] = 0.0f;
    }
  }
  const u32 values = smem_u32(tile16) + t.group * kPvBlocks * kBlockBytes;
  const u64 values_b = sw128_descriptor(values, kBlockBytes, 1024);
  const u64 probs_a = sw128_descriptor(smem_u32(probs_smem), 16, 1024);

  int stage = 0;
  for (int i = 0; i < walk.count; ++i) {
    cp_async_wait<kStages - 2>();
    if (kOperandStages) fence_proxy_async();  // the products read the stage's copies
    __syncthreads();  // the stage has landed; the last tile's products are done
    ring.advance(p, base, walk, w.length0, w.length1, w.row, i, stage);
    const unsigned char* raw = base + kGeo.raw_offset + stage * kTileEntries * kGeo.entry_bytes;
    if (!kOperandStages) {
      dequantize_tile(base, tile16, stage);
      fence_proxy_async();
      __syncthreads();
    }

    u32 probs[4][4];
    float rescale[2];
    if (t.group == 0) {
      float s[32];
      compute_scores(smem_u32(query), smem_u32(kOperandStages ? raw : tile16), s);
      softmax_tile(t, base + kGeo.valid_offset + stage * kTileEntries, p.score_scale_log2, s,
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
    stage = stage + 1 == kStages ? 0 : stage + 1;
    // A segment that ends before the row's last tile (the last one is folded below).
    if (kFolds && p.folds && i + 1 < walk.count &&
        walk.at(i + 1) / kSegmentTiles != walk.at(i) / kSegmentTiles) {
      const bool stored = walk.at(i) / kSegmentTiles != walk.first / kSegmentTiles;
      fold_segment<false>(t, stats, steps, running_max, sum, o, total, stored);
    }
  }
  if (kFolds && p.folds && walk.count > 0) {
    const bool stored = walk.at(walk.count - 1) / kSegmentTiles != walk.first / kSegmentTiles;
    fold_segment<true>(t, stats, steps, running_max, sum, o, total, stored);
  }

  // NOTE: a row without entries walks no tile, so no wait has covered q's copies yet; they must
  // land before O's stores take their place (and before the CTA leaves).
  cp_async_wait<0>();
  if (kFolds && p.split) {
    store_partial(p, w, t, stats, running_max, sum, o, walk.count > 0);
    return;
  }
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

}  // namespace decode
}  // namespace smla

#include "decode_entry.cuh"
