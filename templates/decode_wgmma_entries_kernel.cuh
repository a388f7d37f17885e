// The wgmma entries-on-M decode kernel (tile path wgmma_em, sm_90a only): the problem, segments,
// split partials and outputs of decode_kernel.cuh for 8 or 16 heads per CTA, with a tile's 64
// entries the M of Hopper's warpgroup MMAs and the heads their N, so a CTA computes only its
// heads. Design and measurements: docs/decode-kernel.md.
//
// Two warpgroups, producer and consumer, over two buffers of a tile's keys in 16 bits:
// - Warpgroup 1 gathers the tiles one ahead (each entry one bulk copy of the tensor memory
//   accelerator, completing on the stage's mbarrier; the packed scales by cp.async) and
//   dequantizes each into a free buffer in the 128-byte swizzle: e4m3 to f16 (exact), times
//   2^(s - r) for the packed scale byte s of the value's group and the tile's largest scale byte
//   r (exact while s >= r - 15: f16 reaches 2^-24); the packed rope is copied as bf16.
// - Warpgroup 0 computes, per tile, S^T = K Q^T (64 entries x the heads, 32 k-steps: the nope
//   dims in f16 against the query scaled into f16's range, the packed rope in bf16), the online
//   softmax with the lazy reference of the other kernels, P in shared memory (f16, times
//   2^(r - R) for the segment's largest tile reference R; bf16 for the rope), and
//   O^T += V^T P^T over the 8 64-dim blocks, V^T being the buffer read MN-major; then frees the
//   buffer. Whole-row mode keeps the folded total in registers.
// Named barriers: 1 warpgroup 0, 2 warpgroup 1, 3 + b buffer b filled, 5 + b buffer b free.
//
// The generated prologue defines namespace smla::cfg (see codegen/kernel_source.cpp).
#pragma once

#include "bulk_copy.cuh"
#include "decode_common.cuh"
#include "wgmma.cuh"

namespace smla {
namespace decode {

static_assert(kWgmmaEntriesM, "the wgmma_em template");
static_assert(kHeadsPerCta == 8 || kHeadsPerCta == 16,
              "8 or 16 heads per CTA: the N of the products");
static_assert(kWarps == 8 && kTileEntries == 64 && kStages == 2,
              "two warpgroups over 64-entry tiles, the gather one tile ahead");
static_assert(!kBf16Kv, "the fp8 layouts");

constexpr int kAccumulators = kHeadsPerCta / 2;      // per thread of an m64 x heads product
constexpr int kThreadHeads = kHeadsPerCta / 4;       // the heads of a thread's accumulators
constexpr u32 kKeyBlockBytes = 64 * 128;             // 64 entries x 64 dims of 16 bits
constexpr u32 kHeadBlockBytes = kHeadsPerCta * 128;  // the heads x 64 dims (or entries: P)
constexpr int kPvBlocks = kHeadDim / 64;             // 64-dim blocks of the values
constexpr int kRawChunks = kGeo.chunks_per_entry;    // 16-byte chunks of a raw entry: 36 or 32
constexpr int kNopeSteps = (kPacked ? kRopeDim0 : kHeadDim) / 16;  // f16 k-steps of the scores
constexpr bool kFolds = kGeo.segments > 1;

// Byte offset of value (row, col) in a block of 64 16-bit columns with 128-byte rows, chunk i
// of row r at chunk i ^ (r % 8) (the swizzle the descriptors name).
SMLA_DEVICE u32 swizzled(int row, int col) {
  return row * 128 + ((((col >> 3) & 7) ^ (row & 7)) << 4) + (col & 7) * 2;
}

// f16x2 holding 2^k twice (0 below f16's smallest subnormal), for k <= 15.
SMLA_DEVICE u32 f16x2_pow2(int k) {
  const u32 half = k >= -14 ? (u32)(k + 15) << 10 : k >= -24 ? 1u << (k + 24) : 0u;
  return half | (half << 16);
}

// Accumulator i of a thread: row 16 warp + g + 8 ((i >> 1) & 1) (an entry of S^T, a dim of
// O^T) and column 8 (i >> 2) + 2c + (i & 1) (a head): the head's index among the thread's.
SMLA_DEVICE int thread_head(int i) { return 2 * (i >> 2) + (i & 1); }

// A consumer thread's place in the accumulators.
struct Lanes {
  int warp, g, c;  // warp in warpgroup 0, accumulator row group and column pair
  SMLA_DEVICE int row(int i) const { return 16 * warp + g + 8 * ((i >> 1) & 1); }
  // The CTA head of the thread's head hh (heads 8j + 2c + {0, 1}).
  SMLA_DEVICE int head(int hh) const { return 8 * (hh >> 1) + 2 * c + (hh & 1); }
};

// The query in the products' types, kHeadsPerCta rows of 512 dims in 64-dim blocks: f16 for the
// nope dims (bf16 q times 2^e per head, e putting its |q| maximum in [2^14, 2^15), as
// load_query_tile does), bf16 for the packed rope; fp8 q converted exactly. Stores each head's
// score factor (score_scale_log2 times 2^-e). One warp per head.
SMLA_DEVICE void load_query(const DecodeParams& p, unsigned char* query, float* factors, int row,
                            int head_group) {
  constexpr int kDimsPerLoad = kQFp8 ? 16 : 8;
  constexpr int kLoadsPerLane = kHeadDim / kDimsPerLoad / 32;
  const int lane = threadIdx.x & 31;
  for (int h = threadIdx.x / 32; h < kHeadsPerCta; h += kWarps) {
    const int head = head_group * kHeadsPerCta + h;
    uint4 x[kLoadsPerLane];
    u32 amax = 0u;  // float bits of the largest |q| (bf16 q only)
#pragma unroll
    for (int j = 0; j < kLoadsPerLane; ++j) {
      x[j] = load_query_chunk(p, row, head, (lane + 32 * j) * kDimsPerLoad);
      const u32 words[4] = {x[j].x, x[j].y, x[j].z, x[j].w};
#pragma unroll
      for (int k = 0; k < 4; ++k)
        amax = max(amax, max(words[k] << 17 >> 1, words[k] & 0x7fff0000u));
    }
    const int e = kScaledQuery ? query_exponent(warp_max(amax)) : 0;
    const float multiplier = pow2(e);
#pragma unroll
    for (int j = 0; j < kLoadsPerLane; ++j) {
      const int d = (lane + 32 * j) * kDimsPerLoad;
      const u32 in[4] = {x[j].x, x[j].y, x[j].z, x[j].w};
      u32 words[kDimsPerLoad / 2];  // word k: dims d + 2k, d + 2k + 1
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        if (kQFp8) {  // the scale is in score_scale_log2; both conversions are exact
          if (bf16_dims(d)) {
            e4m3x4_to_bf16x2(in[k], words[2 * k], words[2 * k + 1]);
          } else {
            e4m3x4_to_f16x2(in[k], words[2 * k], words[2 * k + 1]);
          }
        } else {
          const float low = bf16_low(in[k]) * multiplier, high = bf16_high(in[k]) * multiplier;
          words[k] = bf16_dims(d) ? pack_bf16x2(low, high) : pack_f16x2(low, high);
        }
      }
#pragma unroll
      for (int k = 0; k < kDimsPerLoad / 8; ++k) {
        const int dim = d + 8 * k;
        *(uint4*)(query + (dim >> 6) * kHeadBlockBytes + swizzled(h, dim & 63)) =
            make_uint4(words[4 * k], words[4 * k + 1], words[4 * k + 2], words[4 * k + 3]);
      }
    }
    if (lane == 0) factors[h] = p.score_scale_log2 * pow2(-e);
  }
}

// The tile's reference scale byte r (packed): the largest group scale of its 64 entries, and
// whether all of them are within 14 of it (`narrow`: the factors 2^(s - r) are then normal f16).
// Invalid entries' scales are zero-filled, so a tile holding one is not narrow: the general
// factors keep their zero data zero. Every warp computes them: no barrier.
struct TileScales {
  int reference;
  bool narrow;
};
SMLA_DEVICE TileScales tile_scales(const unsigned char* smem, int stage) {
  const uint2* scales = (const uint2*)(smem + kGeo.scale_offset + stage * kTileEntries * 8);
  const int lane = threadIdx.x & 31;
  const uint2 a = scales[lane], b = scales[lane + 32];
  // Bytes 0..6 are the scales, byte 7 padding.
  const u32 m = __vmaxu4(__vmaxu4(a.x, b.x), __vmaxu4(a.y, b.y) & 0x00ffffffu);
  const u32 n = __vminu4(__vminu4(a.x, b.x), __vminu4(a.y, b.y) | 0xff000000u);
  TileScales t;
  t.reference =
      (int)warp_max(max(max(m & 0xffu, (m >> 8) & 0xffu), max((m >> 16) & 0xffu, m >> 24)));
  const u32 least = min(min(n & 0xffu, (n >> 8) & 0xffu), min((n >> 16) & 0xffu, n >> 24));
  t.narrow = (int)warp_min(least) >= t.reference - 14;
  return t;
}

// A thread's share of one entry: its raw chunks 4j + first (j = 0, 1, ...) from `raw` (chunk
// `first`'s place; zeros for an invalid entry, which was never copied) into the entry's 128-byte
// rows at `row`. Chunk 4j + first of the fp8 dims is
// dims 64j + 16 first .. + 15: 8-dim chunks 2 first and 2 first + 1 of block j, swizzled by the
// entry. The packed rope chunks (28 + r) go to chunk r of block 7 as stored. kScaled: times
// 2^(s - reference), a normal f16 built with one multiply-add when kNarrow.
template <bool kScaled, bool kNarrow>
SMLA_DEVICE void dequantize_share(const unsigned char* raw, bool valid, unsigned char* row,
                                  int entry, u32 first, const u8* scales, int reference) {
  const u32 low = (2 * first) ^ (entry & 7), high = (2 * first + 1) ^ (entry & 7);
  const u32 bias = (u32)(15 - reference) << 10;  // f16 bits of 2^(s - r) = (s << 10) + bias
#pragma unroll
  for (int j = 0; j < kRawChunks / 4; ++j) {
    const uint4 x = valid ? *(const uint4*)(raw + 64 * j) : make_uint4(0u, 0u, 0u, 0u);
    if (kPacked && j >= kRopeDim0 / 64) {
      const u32 rope = (first + 4 * (j - kRopeDim0 / 64)) ^ (entry & 7);
      *(uint4*)(row + 7 * kKeyBlockBytes + (rope << 4)) = x;
      continue;
    }
    const u32 words[4] = {x.x, x.y, x.z, x.w};
    u32 out[8];
#pragma unroll
    for (int k = 0; k < 4; ++k) e4m3x4_to_f16x2(words[k], out[2 * k], out[2 * k + 1]);
    if (kScaled) {
      const u32 factor = kNarrow ? (((u32)scales[j] << 10) + bias) * 0x10001u
                                 : f16x2_pow2((int)scales[j] - reference);
#pragma unroll
      for (int k = 0; k < 8; ++k) out[k] = mul_f16x2(out[k], factor);
    }
    *(uint4*)(row + j * kKeyBlockBytes + (low << 4)) = make_uint4(out[0], out[1], out[2], out[3]);
    *(uint4*)(row + j * kKeyBlockBytes + (high << 4)) = make_uint4(out[4], out[5], out[6], out[7]);
  }
}

// The raw stage to key buffer `keys` (warpgroup 1). Thread t takes entries t / 4 and t / 4 + 32
// and their raw chunks 4j + t % 4, so one scale byte serves a chunk and a warp's 16-byte reads
// of the unswizzled stage (8 entries x 4 chunks) and its writes (the swizzle) each meet 8
// distinct bank groups. Also copies the entries' validity for the consumer.
SMLA_DEVICE void dequantize_tile(const unsigned char* smem, unsigned char* keys, u8* valid_copy,
                                 int stage, TileScales tile) {
  const u32 first = (threadIdx.x - 128) % 4;
#pragma unroll
  for (int pass = 0; pass < 2; ++pass) {
    const int e = (threadIdx.x - 128) / 4 + 32 * pass;
    const bool valid = smem[kGeo.valid_offset + stage * kTileEntries + e] != 0;
    if (first == 0) valid_copy[e] = valid ? 1 : 0;
    const unsigned char* raw =
        smem + kGeo.raw_offset + (stage * kTileEntries + e) * kGeo.entry_bytes + 16 * first;
    const u8* scales = smem + kGeo.scale_offset + (stage * kTileEntries + e) * 8;
    if (!kPacked || tile.narrow) {
      dequantize_share<kPacked, true>(raw, valid, keys + e * 128, e, first, scales, tile.reference);
    } else {
      dequantize_share<true, false>(raw, valid, keys + e * 128, e, first, scales, tile.reference);
    }
  }
}

// S^T = K Q^T for the tile's 64 entries and the CTA's heads: the fp8 dims into `nope`, the
// packed rope into `rope`.
SMLA_DEVICE void compute_scores(u32 keys, u32 query, float (&nope)[kAccumulators],
                                float (&rope)[kAccumulators]) {
  const u64 a = sw128_descriptor(keys, 16, 1024), b = sw128_descriptor(query, 16, 1024);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kHeadDim / 16; ++kk) {
    const u64 ak = advance_descriptor(a, (kk / 4) * kKeyBlockBytes + (kk % 4) * 32);
    const u64 bk = advance_descriptor(b, (kk / 4) * kHeadBlockBytes + (kk % 4) * 32);
    if (kk < kNopeSteps) {
      wgmma_narrow<true, 0, 0>(nope, ak, bk, kk > 0 ? 1 : 0);
    } else {
      wgmma_narrow<false, 0, 0>(rope, ak, bk, kk > kNopeSteps ? 1 : 0);
    }
  }
  wgmma_commit();
  wgmma_wait<0>();
  pin(nope);
  if (kPacked) pin(rope);
}

// Sums v over the 8 row groups of a warp (lane bits 2..4), in a fixed order.
SMLA_DEVICE float row_group_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 4);
  v += __shfl_xor_sync(0xffffffffu, v, 8);
  return v + __shfl_xor_sync(0xffffffffu, v, 16);
}
SMLA_DEVICE float row_group_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 4));
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 8));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 16));
}

// barrier.red.or over warpgroup 0 (named barrier 1): whether `predicate` holds in any thread.
SMLA_DEVICE bool consumers_any(bool predicate) {
  u32 result;
  asm volatile(
      "{ .reg .pred p, q; setp.ne.u32 p, %1, 0; bar.red.or.pred q, 1, 128, p; "
      "selp.u32 %0, 1, 0, q; }"
      : "=r"(result)
      : "r"((u32)predicate)
      : "memory");
  return result != 0;
}

// The segment's softmax state of a consumer thread, per thread head.
struct Softmax {
  float max[kThreadHeads];
  float sum[kThreadHeads];  // the thread's entries only
};

// The online softmax over one tile: scores to probabilities against the segment's reference
// (moved per head only by its own scores, lazily: kLazyMargin), P to shared memory, and the
// heads' rescale factors (1 where the reference stays).
SMLA_DEVICE void softmax_tile(const Lanes& t, unsigned char* base, float* maxima, const u8* valid,
                              const float (&factor)[kThreadHeads], float tile_scale,
                              float value_factor, bool fresh, const float (&nope)[kAccumulators],
                              const float (&rope)[kAccumulators], Softmax& sm,
                              float (&rescale)[kThreadHeads]) {
  float x[kAccumulators];
  bool raise = false;
#pragma unroll
  for (int i = 0; i < kAccumulators; ++i) {
    const float s = kPacked ? __fmaf_rn(nope[i], tile_scale, rope[i]) : nope[i];
    x[i] = valid[t.row(i)] != 0 ? s * factor[thread_head(i)] : neg_inf();
    raise = raise || x[i] > sm.max[thread_head(i)] + kLazyMargin;
  }
#pragma unroll
  for (int hh = 0; hh < kThreadHeads; ++hh) rescale[hh] = 1.0f;
  if (consumers_any(fresh || raise)) {
    // The exact path: per head the tile maximum over the 4 warps, read in warp order.
#pragma unroll
    for (int hh = 0; hh < kThreadHeads; ++hh) {
      const int i = 4 * (hh >> 1) + (hh & 1);  // the head's accumulators i and i + 2
      const float v = row_group_max(fmaxf(x[i], x[i + 2]));
      if (t.g == 0) maxima[t.head(hh) * 4 + t.warp] = v;
    }
    named_barrier_sync(1, 128);
#pragma unroll
    for (int hh = 0; hh < kThreadHeads; ++hh) {
      const float4 slots = *(const float4*)(maxima + t.head(hh) * 4);
      const float tile_max = fmaxf(fmaxf(slots.x, slots.y), fmaxf(slots.z, slots.w));
      const float m = sm.max[hh];
      const bool raises = tile_max > m + kLazyMargin;
      rescale[hh] = m == neg_inf() ? 0.0f : raises ? exp2_approx(m - tile_max) : 1.0f;
      if (raises) sm.max[hh] = tile_max;
    }
  }
  unsigned char* probs = base + kGeo.prob_offset;
  unsigned char* rope_probs = base + kGeo.rope_prob_offset;
#pragma unroll
  for (int hh = 0; hh < kThreadHeads; ++hh) {
    const int i = 4 * (hh >> 1) + (hh & 1);
    const float m = sm.max[hh];
    const float p0 = x[i] == neg_inf() ? 0.0f : exp2_approx(x[i] - m);
    const float p1 = x[i + 2] == neg_inf() ? 0.0f : exp2_approx(x[i + 2] - m);
    sm.sum[hh] = __fadd_rn(__fadd_rn(__fmul_rn(sm.sum[hh], rescale[hh]), p0), p1);
    const int head = t.head(hh);
    *(u16*)(probs + swizzled(head, t.row(i))) = (u16)pack_f16x2(p0 * value_factor, 0.0f);
    *(u16*)(probs + swizzled(head, t.row(i + 2))) = (u16)pack_f16x2(p1 * value_factor, 0.0f);
    if (kPacked) {
      *(u16*)(rope_probs + swizzled(head, t.row(i))) = (u16)pack_bf16x2(p0, 0.0f);
      *(u16*)(rope_probs + swizzled(head, t.row(i + 2))) = (u16)pack_bf16x2(p1, 0.0f);
    }
  }
}

// O^T += V^T P^T for the 8 64-dim blocks: V^T is block nb of the key buffer read MN-major
// (8-entry groups 1024 bytes apart), P^T the heads' rows of P (K-major); the packed rope block
// (the last) in bf16.
SMLA_DEVICE void accumulate_values(u32 keys, u32 probs, u32 rope_probs,
                                   float (&o)[kPvBlocks][kAccumulators]) {
  // NOTE: pinned before the fence, or the compiler moves the rescaling of later blocks past it
  // and ptxas has to wait for the products between blocks (C7519).
#pragma unroll
  for (int nb = 0; nb < kPvBlocks; ++nb) pin(o[nb]);
  wgmma_fence();
#pragma unroll
  for (int nb = 0; nb < kPvBlocks; ++nb) {
    const bool rope_block = kPacked && nb == kPvBlocks - 1;
    const u64 a = sw128_descriptor(keys + nb * kKeyBlockBytes, kKeyBlockBytes, 1024);
    const u64 b = sw128_descriptor(rope_block ? rope_probs : probs, 16, 1024);
#pragma unroll
    for (int ks = 0; ks < kTileEntries / 16; ++ks) {
      const u64 ak = advance_descriptor(a, ks * 16 * 128), bk = advance_descriptor(b, ks * 32);
      if (rope_block) {
        wgmma_narrow<false, 1, 0>(o[nb], ak, bk, 1);
      } else {
        wgmma_narrow<true, 1, 0>(o[nb], ak, bk, 1);
      }
    }
  }
  wgmma_commit();
  wgmma_wait<0>();
#pragma unroll
  for (int nb = 0; nb < kPvBlocks; ++nb) pin(o[nb]);
}

// Whether value block nb holds fp8 dims (scaled by the tile references).
SMLA_DEVICE bool scaled_block(int nb) { return kPacked && nb < kRopeDim0 / 64; }

// Calls f(block, dim, accumulator i) for every value of the thread's accumulators.
template <typename F>
SMLA_DEVICE void for_each_value(const Lanes& t, F f) {
#pragma unroll
  for (int nb = 0; nb < kPvBlocks; ++nb)
#pragma unroll
    for (int i = 0; i < kAccumulators; ++i) f(nb, 64 * nb + t.row(i), i);
}

// Key buffer b's 64 validity bytes and reference (buffer_info_offset).
SMLA_DEVICE u8* buffer_valid(unsigned char* smem, int b) {
  return smem + kGeo.buffer_info_offset + b * (kTileEntries + 16);
}
SMLA_DEVICE int* buffer_reference(unsigned char* smem, int b) {
  return (int*)(buffer_valid(smem, b) + kTileEntries);
}

// The index of entry e of the walk's tile `tile` (-1 past the row's length).
SMLA_DEVICE int entry_index(const DecodeParams& p, const WorkItem& w, int tile, int e) {
  const int source = tile < kGeo.tiles0 ? 0 : 1;
  const int column = (tile - (source == 0 ? 0 : kGeo.tiles0)) * kTileEntries + e;
  const SourceParams& src = p.sources[source];
  if (column >= (source == 0 ? w.length0 : w.length1)) return -1;
  return __ldg(src.indices + (i64)w.row * src.index_row_stride + column);
}

// Lane l of warpgroup 1's first warp copies entries l and l + 32 of a tile of source kSource
// into `stage`: the raw token as one bulk copy completing on the stage's barrier, the packed
// scales as an 8-byte cp.async (zero-filled for an invalid entry, whose token is not copied).
template <int kSource, int kPageSize>
SMLA_DEVICE void gather_tile_bulk(const DecodeParams& p, unsigned char* smem, int stage,
                                  const int (&index)[2]) {
  const SourceParams& src = p.sources[kSource];
  constexpr u32 kTokenBytes = kPacked ? 576 : 512;
  const u32 barrier = smem_u32(smem + kGeo.barrier_offset) + 8 * stage;
  const int lane = threadIdx.x & 31;
  bool valid[2];
  u32 count = 0;
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    valid[k] = index[k] >= 0 && (i64)index[k] < src.index_limit;
    count += __popc(__ballot_sync(0xffffffffu, valid[k]));
  }
  if (lane == 0) mbarrier_arrive_expect_bytes(barrier, count * kTokenBytes);
  __syncwarp();
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const int e = lane + 32 * k;
    const i64 page = valid[k] ? index[k] / kPageSize : 0;
    const int slot = valid[k] ? index[k] % kPageSize : 0;
    const unsigned char* page_base = src.cache + page * src.page_stride_bytes;
    smem[kGeo.valid_offset + stage * kTileEntries + e] = valid[k] ? 1 : 0;
    if (kPacked) {
      cp_async_8(smem_u32(smem + kGeo.scale_offset + (stage * kTileEntries + e) * 8),
                 page_base + kPageSize * 576 + slot * 8, valid[k] ? 8u : 0u);
    }
    if (valid[k]) {
      bulk_copy(smem_u32(smem + kGeo.raw_offset + (stage * kTileEntries + e) * kGeo.entry_bytes),
                page_base + slot * kTokenBytes, kTokenBytes, barrier);
    }
  }
  cp_async_commit();
}

SMLA_DEVICE void gather_tile_bulk(const DecodeParams& p, unsigned char* smem, int tile, int stage,
                                  const int (&index)[2]) {
  if (tile < kGeo.tiles0) {
    gather_tile_bulk<0, kPageSize0>(p, smem, stage, index);
  } else {
    gather_tile_bulk<1, kPageSize1>(p, smem, stage, index);
  }
}

// Warpgroup 1: its first warp gathers the row's tiles one ahead, the warpgroup dequantizes tile
// i into buffer i % 2 once the consumer has freed it (named barrier 5 + b), then signals it
// filled (3 + b). The first tile's copies are issued before the query is loaded (`first`).
struct Producer {
  bool issuer;    // the warp that issues the copies
  int next_tile;  // the tile whose copies go next, and its entries' indices
  int index[2];

  SMLA_DEVICE void start(const DecodeParams& p, unsigned char* smem, const WorkItem& w,
                         const TileWalk& walk) {
    issuer = threadIdx.x < 160;
    if (!issuer || walk.count == 0) return;
    const int lane = threadIdx.x & 31;
    if (lane == 0) {
      for (int s = 0; s < kStages; ++s)
        mbarrier_init(smem_u32(smem + kGeo.barrier_offset) + 8 * s, 1);
      fence_proxy_async();
    }
    __syncwarp();
    next_tile = walk.first;
    const int first_index[2] = {entry_index(p, w, next_tile, lane),
                                entry_index(p, w, next_tile, lane + 32)};
    gather_tile_bulk(p, smem, next_tile, 0, first_index);
    next_tile = walk.next(next_tile);
    if (walk.count > 1) {
      index[0] = entry_index(p, w, next_tile, lane);
      index[1] = entry_index(p, w, next_tile, lane + 32);
    }
  }

  SMLA_DEVICE void run(const DecodeParams& p, unsigned char* smem, unsigned char* keys,
                       const WorkItem& w, const TileWalk& walk) {
    const u32 barriers = smem_u32(smem + kGeo.barrier_offset);
    const int lane = threadIdx.x & 31;
    for (int i = 0; i < walk.count; ++i) {
      const int b = i & 1, stage = i & 1;  // one tile ahead: two stages, two buffers
      mbarrier_wait(barriers + 8 * stage, (i >> 1) & 1);
      if (issuer) cp_async_wait<0>();
      named_barrier_sync(2, 128);  // the stage has landed; the other stage is read
      if (issuer && i + 1 < walk.count) {
        gather_tile_bulk(p, smem, next_tile, stage ^ 1, index);
        next_tile = walk.next(next_tile);
        if (i + 2 < walk.count) {
          index[0] = entry_index(p, w, next_tile, lane);
          index[1] = entry_index(p, w, next_tile, lane + 32);
        }
      }
      const TileScales scales = kPacked ? tile_scales(smem, stage) : TileScales{0, true};
      if (i >= 2) named_barrier_sync(5 + b, 256);
      dequantize_tile(smem, keys + b * kTileEntries * kHeadDim * 2, buffer_valid(smem, b), stage,
                      scales);
      if (threadIdx.x == 128) *buffer_reference(smem, b) = scales.reference;
      fence_proxy_async();
      named_barrier_arrive(3 + b, 256);
    }
  }
};

// Warpgroup 0: the products, the softmax, the folds and the outputs.
SMLA_DEVICE void consume(const DecodeParams& p, unsigned char* smem, unsigned char* base,
                         const WorkItem& w, const TileWalk& walk) {
  float* maxima = (float*)(smem + kGeo.reduce_offset);  // [head][warp]
  float* sums = maxima + kHeadsPerCta * 4;              // [head][warp]
  Lanes t;
  t.warp = threadIdx.x / 32;
  t.g = threadIdx.x % 32 / 4;
  t.c = threadIdx.x % 4;
  float factor[kThreadHeads];  // the score factors of the thread's heads
#pragma unroll
  for (int hh = 0; hh < kThreadHeads; ++hh) {
    factor[hh] = ((const float*)(smem + kGeo.query_factor_offset))[t.head(hh)];
  }

  float o[kPvBlocks][kAccumulators], total[kPvBlocks][kAccumulators];  // total: kFolds only
  float total_max[kThreadHeads], total_sum[kThreadHeads];
  Softmax sm;
#pragma unroll
  for (int hh = 0; hh < kThreadHeads; ++hh) {
    sm.max[hh] = total_max[hh] = neg_inf();
    sm.sum[hh] = total_sum[hh] = 0.0f;
  }
#pragma unroll
  for (int nb = 0; nb < kPvBlocks; ++nb)
#pragma unroll
    for (int i = 0; i < kAccumulators; ++i) o[nb][i] = total[nb][i] = 0.0f;

  const u32 query = smem_u32(base + kGeo.query_offset);
  const u32 probs = smem_u32(base + kGeo.prob_offset);
  const u32 rope_probs = smem_u32(base + kGeo.rope_prob_offset);
  int tile = walk.first;
  bool fresh = true;
  int segment_reference = 0;  // R: the segment's largest tile reference (packed)
  for (int i = 0; i < walk.count; ++i) {
    const int b = i & 1;
    const u32 keys = smem_u32(base + kGeo.keys_offset) + b * kTileEntries * kHeadDim * 2;
    named_barrier_sync(3 + b, 256);  // buffer b holds tile i
    const int reference = kPacked ? *buffer_reference(smem, b) : 0;
    // The packed values are in units of 2^(R - 127) within a segment: a tile with a larger
    // reference rescales the fp8 blocks by an exact power of two.
    const int raised = fresh ? reference : max(segment_reference, reference);
    const float block_factor = fresh ? 1.0f : pow2(max(segment_reference - raised, -126));
    segment_reference = raised;

    float nope[kAccumulators], rope[kAccumulators], rescale[kThreadHeads];
    compute_scores(keys, query, nope, rope);
    const float tile_scale = kPacked ? ue8m0_value((u32)reference) : 1.0f;
    const float value_factor = kPacked ? pow2(max(reference - raised, -126)) : 1.0f;
    softmax_tile(t, base, maxima, buffer_valid(smem, b), factor, tile_scale, value_factor, fresh,
                 nope, rope, sm, rescale);
    fence_proxy_async();
    named_barrier_sync(1, 128);  // P is written
    if (!fresh) {
#pragma unroll
      for (int nb = 0; nb < kPvBlocks; ++nb)
#pragma unroll
        for (int k = 0; k < kAccumulators; ++k) {
          o[nb][k] *=
              scaled_block(nb) ? rescale[thread_head(k)] * block_factor : rescale[thread_head(k)];
        }
    }
    accumulate_values(keys, probs, rope_probs, o);
    if (i + 2 < walk.count) named_barrier_arrive(5 + b, 256);  // buffer b is free

    const int next_tile = walk.next(tile);
    const bool segment_ends =
        i + 1 == walk.count || next_tile / kSegmentTiles != tile / kSegmentTiles;
    tile = next_tile;
    fresh = segment_ends;
    if (!segment_ends) continue;

    // The segment's sum per head: the thread's over its row groups, then the warps in order.
    float seg_sum[kThreadHeads];
#pragma unroll
    for (int hh = 0; hh < kThreadHeads; ++hh) {
      const float v = row_group_sum(sm.sum[hh]);
      if (t.g == 0) sums[t.head(hh) * 4 + t.warp] = v;
    }
    named_barrier_sync(1, 128);
#pragma unroll
    for (int hh = 0; hh < kThreadHeads; ++hh) {
      const float4 slots = *(const float4*)(sums + t.head(hh) * 4);
      seg_sum[hh] = ((slots.x + slots.y) + slots.z) + slots.w;
    }
    if (kPacked) {
      const float unit = ue8m0_value((u32)segment_reference);
#pragma unroll
      for (int nb = 0; nb < kPvBlocks; ++nb)
#pragma unroll
        for (int k = 0; k < kAccumulators; ++k) {
          if (scaled_block(nb)) o[nb][k] *= unit;
        }
    }
    if (kFolds && !p.split) {
      FoldStep step[kThreadHeads];
#pragma unroll
      for (int hh = 0; hh < kThreadHeads; ++hh) {
        step[hh] = fold_state(total_max[hh], total_sum[hh], sm.max[hh], seg_sum[hh]);
        sm.max[hh] = neg_inf();
        sm.sum[hh] = 0.0f;
      }
#pragma unroll
      for (int nb = 0; nb < kPvBlocks; ++nb)
#pragma unroll
        for (int k = 0; k < kAccumulators; ++k) {
          total[nb][k] = fold_value(total[nb][k], o[nb][k], step[thread_head(k)]);
          o[nb][k] = 0.0f;
        }
    } else {
#pragma unroll
      for (int hh = 0; hh < kThreadHeads; ++hh) {
        total_max[hh] = sm.max[hh];
        total_sum[hh] = seg_sum[hh];
      }
    }
  }

  if (p.split) {
    if (t.warp == 0 && t.g == 0) {
#pragma unroll
      for (int hh = 0; hh < kThreadHeads; ++hh) {
        float* ml = p.partial_ml + (w.item * kHeadsPerCta + t.head(hh)) * 2;
        ml[0] = total_max[hh];
        ml[1] = total_sum[hh];
      }
    }
    // A segment with no nonempty tile leaves its values unwritten: its max is -inf, and the
    // combine kernel never uses them.
    if (walk.count == 0) return;
    float* out = p.partial_out + w.item * kHeadsPerCta * kHeadDim;
    for_each_value(t, [&](int nb, int dim, int k) {
      out[t.head(thread_head(k)) * kHeadDim + dim] = o[nb][k];
    });
    return;
  }
  float out_factor[kThreadHeads];
#pragma unroll
  for (int hh = 0; hh < kThreadHeads; ++hh) {
    const int head = w.head_group * kHeadsPerCta + t.head(hh);
    out_factor[hh] = output_factor(total_max[hh], total_sum[hh], sink_log2(p, head), p.out_scale);
    if (kWantLse && head < kNumHeads && t.warp == 0 && t.g == 0) {
      p.lse[(i64)w.row * kNumHeads + head] = row_lse(total_max[hh], total_sum[hh]);
    }
  }
  for_each_value(t, [&](int nb, int dim, int k) {
    const int head = w.head_group * kHeadsPerCta + t.head(thread_head(k));
    if (head >= kNumHeads) return;
    const float v = kFolds ? total[nb][k] : o[nb][k];
    u16* out = (u16*)p.out + (i64)w.row * p.out_row_stride + (i64)head * p.out_head_stride + dim;
    *out = (u16)pack_bf16x2(__fmul_rn(v, out_factor[thread_head(k)]), 0.0f);
  });
}

SMLA_DEVICE void run_cta(const DecodeParams& p, unsigned char* smem, const WorkItem& w) {
  // The products' operands start at the first 1024-byte boundary (wgmma_entries_geometry).
  unsigned char* base = smem + ((1024u - (smem_u32(smem) & 1023u)) & 1023u);
  const TileWalk walk = make_walk(w.length0, w.length1, w.begin, w.end);
  // NOTE: a warp-uniform value (a broadcast): wgmma in branches on it stays asynchronous,
  // where a branch on threadIdx makes ptxas serialize the products.
  const bool producer = __shfl_sync(0xffffffffu, (int)threadIdx.x / 128, 0) == 1;
  Producer gather;
  if (producer) gather.start(p, smem, w, walk);
  load_query(p, base + kGeo.query_offset, (float*)(smem + kGeo.query_factor_offset), w.row,
             w.head_group);
  fence_proxy_async();
  __syncthreads();  // the query, and the stages' barriers
  if (producer) {
    gather.run(p, smem, base + kGeo.keys_offset, w, walk);
  } else {
    consume(p, smem, base, w, walk);
  }
}

}  // namespace decode
}  // namespace smla

#include "decode_entry.cuh"
