// Part of the wgmma decode kernel (decode_wgmma_kernel.cuh): a tile's operands in shared memory
// (the query, the dequantized or converted tile), warpgroup 0's scores and online softmax, and P.
#pragma once

#include "decode_common.cuh"
#include "decode_lazy_softmax.cuh"
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
    s[i] = probability(x, running_max[(i >> 1) & 1]);
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

}  // namespace decode
}  // namespace smla
