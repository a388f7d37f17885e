// The heads-on-M decode kernel (tile path mma_sync_hm): the problem, segments, split partials
// and outputs of decode_kernel.cuh, with the CTA's heads (16 or 32) the M of both products.
// Design and measurements: docs/decode-kernel.md.
//
// Scores: S = Q K^T. The two warps of a 16-entry block (two n tiles) each take half of the
// 512 dims, so each A fragment of the query tile (ldmatrix, the k order of query_position or
// e4m3_position) feeds two MMAs; the B fragments are the raw e4m3 bytes of the stage converted
// to f16 in registers (one cvt per pair, exact; e4m3 MMAs on the raw bytes for fp8 q on the
// uniform layout on sm_90a at multiples of 32 heads: kE4m3Scores). The packed scales multiply each
// 64-dim group's partial sums, the packed rope group is bf16 as stored. Each warp then keeps one n
// tile, adding its partner's partial sums (part 0's first) through shared memory. Softmax: a thread
// holds 2 heads x 2 entries per m tile; the lazy segment reference of decode_kernel.cuh, per head,
// with the tile maxima and the segment sums met in shared memory in warp order. P goes to shared
// memory (f16; bf16 for bf16 values). Values: O = P V. Warp w accumulates dims 64w .. 64w + 63
// (kPvDims) of all heads: A fragments of P by ldmatrix, B fragments of V by ldmatrix.trans of the
// stage (e4m3: a byte permute splits a register into even and odd dims, one cvt each); the packed
// scales ride on P per entry. The folded total (whole rows, prefix items) is kept in registers.
//
// The generated prologue defines namespace smla::cfg (see codegen/kernel_source.cpp).
#pragma once

#include "decode_common.cuh"

namespace smla {
namespace decode {

constexpr int kMTiles = kHeadsPerCta / 16;  // m tiles of heads
constexpr int kPvDims = kHeadDim / kWarps;  // output dims a warp accumulates
constexpr int kPvNTiles = kPvDims / 8;
constexpr int kPvKSteps = kTileEntries / 16;
constexpr int kPvGroups = kPvDims / 64;  // 64-dim groups of a warp's value dims
constexpr int kProbRowBytes = 2 * kGeo.prob_stride;
constexpr int kMTileQueryBytes = 16 * kGeo.query_stride;
constexpr int kMTileProbBytes = 16 * kProbRowBytes;
// kE4m3Scores (the key's qk field): fp8 q meets the uniform layout's e4m3 values in e4m3 MMAs,
// no conversion in Q.K.
static_assert(!kE4m3Scores || (kQFp8 && kLayout == kLayoutUniform), "e4m3 scores: fp8 q, uniform KV");

static_assert(kHeadsOnM, "the mma_sync_hm template");
static_assert(kHeadsPerCta == 16 || kHeadsPerCta == 32, "heads per CTA: 16 or 32");
constexpr int kEntryBlocks = kTileEntries / 16;
constexpr int kPartGroups = 4;  // 64-dim groups of a part of the scores' dims
static_assert(kTileEntries == 8 * kWarps, "two warps (parts of the dims) per 16-entry block");
static_assert(kPvDims % 64 == 0, "a warp's value dims are whole 64-dim groups");

// ---- per-thread offsets ------------------------------------------------------------------------

struct Lanes {
  int warp, lane, g, c;  // g: fragment row group, c: fragment column pair
  int block, part;       // the 16-entry block and the half of the dims of the scores
  u32 query_a;   // 16-bit query: this lane's ldmatrix row of the A fragments (the part's k-step 0)
  u32 query_a8;  // e4m3 query: the same for the e4m3 bytes
  u32 raw[2];    // fp8 scores: entry 16 block + 8n + g's chunk c of the part's first group
  u32 rope[2][2];  // packed: the same entries' rope chunks c, c + 4
  u32 key_b;       // bf16 layout: this lane's ldmatrix row of the key B fragments
  int key_chunk;   // bf16 layout: its chunk at the part's k-step 0, before the swizzle
  u32 probs_a;     // this lane's ldmatrix row of the P A fragments (k-step 0)
  u32 pv_values[kPvNTiles / 2];  // ldmatrix.trans rows of V per call (stage 0, k-step 0)

  SMLA_DEVICE int head(int mt, int half) const { return 16 * mt + g + 8 * half; }
  // The first of the 8 entries whose scores the warp keeps (n tile `part` of its block).
  SMLA_DEVICE int entry0() const { return 16 * block + 8 * part; }
  SMLA_DEVICE int score_entry(int e) const { return entry0() + 2 * c + (e & 1); }
  SMLA_DEVICE int group_dim0(int j) const { return warp * kPvDims + 64 * j; }
};

SMLA_DEVICE Lanes make_lanes() {
  Lanes t;
  t.warp = threadIdx.x / 32;
  t.lane = threadIdx.x & 31;
  t.g = t.lane >> 2;
  t.c = t.lane & 3;
  t.block = t.warp % kEntryBlocks;
  t.part = t.warp / kEntryBlocks;
  const int m = t.lane >> 3, row = t.lane & 7;
  // A = 16 heads x 16 k: matrices (heads 0-7 | 8-15) x (k 0-7 | 8-15); a part's dims start
  // 256 16-bit positions (or 256 e4m3 bytes) into a head's row.
  const u32 head_row = kGeo.query_offset + (8 * (m & 1) + row) * kGeo.query_stride + 16 * (m >> 1);
  t.query_a = head_row + 2 * 256 * t.part;
  // e4m3 A = 16 heads x 32 k: the same matrices over 16-byte halves (e4m3_position).
  t.query_a8 = head_row + 256 * t.part;
#pragma unroll
  for (int n = 0; n < 2; ++n) {
    const int entry = 16 * t.block + 8 * n + t.g;
    const u32 entry_base = kGeo.raw_offset + entry * kGeo.entry_bytes;
    t.raw[n] = entry_base + 16 * stored_chunk(entry, 4 * kPartGroups * t.part + t.c);
    t.rope[n][0] = entry_base + 16 * stored_chunk(entry, 28 + t.c);
    t.rope[n][1] = entry_base + 16 * stored_chunk(entry, 32 + t.c);
  }
  // bf16 keys: matrices (entries 0-7 | 8-15 of the block) x (k 0-7 | 8-15): chunk 2 kk + (m & 1)
  // of k-step kk, stored at that chunk ^ row.
  t.key_b = kGeo.raw_offset + (16 * t.block + 8 * (m >> 1) + row) * kGeo.entry_bytes;
  t.key_chunk = 2 * 16 * t.part + (m & 1);
  // P = 16 heads x 16 entries: matrices (heads 0-7 | 8-15) x (entries 0-7 | 8-15).
  t.probs_a = kGeo.prob_offset + (8 * (m & 1) + row) * kProbRowBytes + 16 * (m >> 1);
  // V^T: matrices (entries 0-7 | 8-15) x (chunk 2i | 2i + 1 of the call's pair). A call gives
  // two bf16 n tiles (chunks of 8 dims) or four e4m3 n tiles (chunks of 16 dims, even and odd).
  const int pv_entry = 8 * (m & 1) + row;
#pragma unroll
  for (int i = 0; i < kPvNTiles / 2; ++i) {
    const int j = i / 4, call = i % 4;  // call `call` of 64-dim group j
    const int d0 = t.group_dim0(j);
    int chunk;
    if (kBf16Kv) {
      chunk = d0 / 8 + 2 * call;
    } else if (bf16_dims(d0)) {
      chunk = 28 + (d0 - kRopeDim0) / 8 + 2 * call;
    } else {
      chunk = d0 / 16 + 2 * (call % 2);  // calls 0, 1 only
    }
    chunk += m >> 1;
    t.pv_values[i] =
        kGeo.raw_offset + pv_entry * kGeo.entry_bytes + 16 * stored_chunk(pv_entry, chunk);
  }
  return t;
}

// ---- scores -------------------------------------------------------------------------------------

// s += Q (the part's k-step kk, every m tile) x B (both n tiles), in f16 or bf16.
template <bool kF16>
SMLA_DEVICE void score_step(u32 base, const Lanes& t, int kk, const u32 (&b0)[2],
                            const u32 (&b1)[2], float (&s)[kMTiles][2][4]) {
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
    u32 a[4];
    ldmatrix_x4(base + t.query_a + mt * kMTileQueryBytes + 32 * kk, a[0], a[1], a[2], a[3]);
#pragma unroll
    for (int n = 0; n < 2; ++n) {
      if (kF16) {
        mma_f16(s[mt][n], a, b0[n], b1[n]);
      } else {
        mma_bf16(s[mt][n], a, b0[n], b1[n]);
      }
    }
  }
}

SMLA_DEVICE void clear(float (&s)[kMTiles][2][4]) {
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) s[mt][n][e] = 0.0f;
}

// Partial S of every head x the block's 16 entries over this part's dims, for the fp8
// layouts. Accumulator e of [mt][n] holds head g + 8 (e >> 1) of m tile mt and entry
// 16 block + 8n + 2c + (e & 1).
SMLA_DEVICE void fp8_scores(const unsigned char* smem, const Lanes& t, int stage,
                            float (&s)[kMTiles][2][4]) {
  const u32 base = smem_u32(smem);
  const u32 stage_bytes = stage * kTileEntries * kGeo.entry_bytes;
  // The packed scale bytes of the thread's entries (8 bytes per entry, one per group).
  const u8* scales = smem + kGeo.scale_offset + (stage * kTileEntries + 16 * t.block + 2 * t.c) * 8;
  float acc[kMTiles][2][4];  // the scores, or one packed group's partial sums
  clear(acc);
  if (kPacked) clear(s);
#pragma unroll
  for (int gi = 0; gi < kPartGroups; ++gi) {
    const int group = kPartGroups * t.part + gi;
    const bool rope = kPacked && group == kRopeDim0 / 64;
    if (kPacked) clear(acc);
    if (rope) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {  // chunk h feeds k-steps 2h and 2h + 1
        uint4 w[2];
#pragma unroll
        for (int n = 0; n < 2; ++n) w[n] = *(const uint4*)(smem + t.rope[n][h] + stage_bytes);
        score_step<false>(base, t, 4 * gi + 2 * h, {w[0].x, w[1].x}, {w[0].y, w[1].y}, acc);
        score_step<false>(base, t, 4 * gi + 2 * h + 1, {w[0].z, w[1].z}, {w[0].w, w[1].w}, acc);
      }
    } else {
      // Word j of n tile n holds dims 16c + 4j .. 16c + 4j + 3 of the group.
      u32 words[2][4];
#pragma unroll
      for (int n = 0; n < 2; ++n) {
        const uint4 x = *(const uint4*)(smem + t.raw[n] + stage_bytes + 64 * gi);
        words[n][0] = x.x, words[n][1] = x.y, words[n][2] = x.z, words[n][3] = x.w;
      }
      if (kE4m3Scores) {  // k-step j: dims 16c + 8j + {0..3 | 4..7} (e4m3_position)
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
          for (int mt = 0; mt < kMTiles; ++mt) {
            u32 a[4];
            ldmatrix_x4(base + t.query_a8 + mt * kMTileQueryBytes + 64 * gi + 32 * j, a[0], a[1],
                        a[2], a[3]);
#pragma unroll
            for (int n = 0; n < 2; ++n) {
              mma_e4m3(acc[mt][n], a, words[n][2 * j], words[n][2 * j + 1]);
            }
          }
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          u32 b0[2], b1[2];  // k = 2c, 2c + 1 | 2c + 8, 2c + 9 (query_position)
#pragma unroll
          for (int n = 0; n < 2; ++n) e4m3x4_to_f16x2(words[n][j], b0[n], b1[n]);
          score_step<true>(base, t, 4 * gi + j, b0, b1, acc);
        }
      }
    }
    if (kPacked) {
#pragma unroll
      for (int n = 0; n < 2; ++n) {
        const float scale[2] = {rope ? 1.0f : ue8m0_value(scales[64 * n + group]),
                                rope ? 1.0f : ue8m0_value(scales[64 * n + 8 + group])};
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            s[mt][n][e] = fmaf(acc[mt][n][e], scale[e & 1], s[mt][n][e]);
          }
      }
    }
  }
  if (!kPacked) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int n = 0; n < 2; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[mt][n][e] = acc[mt][n][e];
  }
}

// The same for the bf16 layout: B fragments of both n tiles by one ldmatrix of the stage.
SMLA_DEVICE void bf16_scores(const unsigned char* smem, const Lanes& t, int stage,
                             float (&s)[kMTiles][2][4]) {
  const u32 base = smem_u32(smem);
  const u32 keys = base + t.key_b + stage * kTileEntries * kGeo.entry_bytes;
  const int row = t.lane & 7;
  clear(s);
#pragma unroll
  for (int kk = 0; kk < 16; ++kk) {
    u32 b0[2], b1[2];
    ldmatrix_x4(keys + 16 * ((t.key_chunk + 2 * kk) ^ row), b0[0], b1[0], b0[1], b1[1]);
    score_step<false>(base, t, kk, b0, b1, s);
  }
}

// The warp's scores: its n tile of the block, part 0's partial sums plus part 1's.
SMLA_DEVICE void exchange_scores(unsigned char* smem, const Lanes& t,
                                 const float (&partial)[kMTiles][2][4], float (&x)[kMTiles][4]) {
  // [block][n tile][m tile][lane], written by the part that does not keep the n tile.
  float4* area = (float4*)(smem + kGeo.exchange_offset);
  const int other = 1 - t.part;
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
    float v[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] = t.part == 0 ? partial[mt][1][e] : partial[mt][0][e];
    area[((t.block * 2 + other) * kMTiles + mt) * 32 + t.lane] =
        make_float4(v[0], v[1], v[2], v[3]);
  }
  named_barrier_sync(1 + t.block, 64);
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
    const float4 theirs = area[((t.block * 2 + t.part) * kMTiles + mt) * 32 + t.lane];
    const float their[4] = {theirs.x, theirs.y, theirs.z, theirs.w};
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float mine = t.part == 0 ? partial[mt][0][e] : partial[mt][1][e];
      x[mt][e] = t.part == 0 ? mine + their[e] : their[e] + mine;
    }
  }
}

// ---- softmax --------------------------------------------------------------------------------

// The kWarps slots of one head, reduced in warp order.
template <bool kMax>
SMLA_DEVICE float read_slots(const float* slots, int head) {
  const float* s = slots + head * kWarps;
  float r = kMax ? neg_inf() : 0.0f;
#pragma unroll
  for (int i = 0; i < kWarps; i += 4) {
    const float4 v = *(const float4*)(s + i);
    r = kMax ? fmaxf(fmaxf(fmaxf(r, v.x), v.y), fmaxf(v.z, v.w)) : r + v.x + v.y + v.z + v.w;
  }
  return r;
}

// Stores the probabilities of a thread's accumulator pair (e, e + 1) of m tile mt: f16 for
// e4m3 values (P <= 2^15: kLazyMargin), bf16 for bf16 values (the bf16 layout, a packed copy
// for the rope dims).
SMLA_DEVICE void store_probabilities(unsigned char* smem, const Lanes& t, int mt, int half,
                                     float p0, float p1) {
  const int at = t.head(mt, half) * kProbRowBytes + 2 * (t.entry0() + 2 * t.c);
  *(u32*)(smem + kGeo.prob_offset + at) = kBf16Kv ? pack_bf16x2(p0, p1) : pack_f16x2(p0, p1);
  if (kPacked) *(u32*)(smem + kGeo.rope_prob_offset + at) = pack_bf16x2(p0, p1);
}

// ---- values -------------------------------------------------------------------------------------

struct Accumulators {
  float o[kMTiles][kPvNTiles][4];  // head g + 8 (e >> 1) of m tile mt
};

// Multiplies the accumulators of value group j by `factor` (prepare_value_scales).
SMLA_DEVICE void scale_group(Accumulators& acc, int j, float factor) {
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int nt = 8 * j; nt < 8 * j + 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc.o[mt][nt][e] *= factor;
}

// O += P V over the tile for this warp's dims.
SMLA_DEVICE void accumulate_values(const unsigned char* smem, const Lanes& t, int stage,
                                   Accumulators& acc) {
  const u32 base = smem_u32(smem);
  const u32 values = base + stage * kTileEntries * kGeo.entry_bytes;
  const u32* factors =
      (const u32*)(smem + kGeo.value_factor_offset) + t.warp * kPvGroups * kTileEntries / 2;
  const u32 bf16_delta = kPacked ? kGeo.rope_prob_offset - kGeo.prob_offset : 0;
#pragma unroll
  for (int ks = 0; ks < kPvKSteps; ++ks) {
    const u32 stride = 16 * kGeo.entry_bytes * ks;
#pragma unroll
    for (int j = 0; j < kPvGroups; ++j) {
      const bool bf16 = bf16_dims(t.group_dim0(j));
      u32 a[kMTiles][4];  // P of entries 16ks .. 16ks + 15
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        ldmatrix_x4(base + t.probs_a + (bf16 ? bf16_delta : 0) + mt * kMTileProbBytes + 32 * ks,
                    a[mt][0], a[mt][1], a[mt][2], a[mt][3]);
      }
      if (bf16) {
#pragma unroll
        for (int call = 0; call < 4; ++call) {
          u32 r[4];  // n tiles 2 call (r0, r1) and 2 call + 1 (r2, r3)
          ldmatrix_x4_trans(values + t.pv_values[4 * j + call] + stride, r[0], r[1], r[2], r[3]);
#pragma unroll
          for (int mt = 0; mt < kMTiles; ++mt) {
            mma_bf16(acc.o[mt][8 * j + 2 * call], a[mt], r[0], r[1]);
            mma_bf16(acc.o[mt][8 * j + 2 * call + 1], a[mt], r[2], r[3]);
          }
        }
        continue;
      }
      if (kPacked) {  // P' = P * 2^(s - ref): entries 2c, 2c + 1 | 2c + 8, 2c + 9 of the k-step
        const u32 low = factors[j * kTileEntries / 2 + 8 * ks + t.c];
        const u32 high = factors[j * kTileEntries / 2 + 8 * ks + t.c + 4];
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
          a[mt][0] = mul_f16x2(a[mt][0], low), a[mt][1] = mul_f16x2(a[mt][1], low);
          a[mt][2] = mul_f16x2(a[mt][2], high), a[mt][3] = mul_f16x2(a[mt][3], high);
        }
      }
#pragma unroll
      for (int call = 0; call < 2; ++call) {
        // r0, r1: chunk 2 call (entries 2c, 2c + 1 | + 8), r2, r3: chunk 2 call + 1; each
        // register holds dims 2g, 2g + 1 of two entries, split into even and odd dims.
        u32 r[4], even[4], odd[4];
        ldmatrix_x4_trans(values + t.pv_values[4 * j + call] + stride, r[0], r[1], r[2], r[3]);
#pragma unroll
        for (int i = 0; i < 4; ++i) e4m3x4_to_f16x2(byte_perm(r[i], 0u, 0x3120u), even[i], odd[i]);
        const int nt = 8 * j + 4 * call;  // chunk q's n tiles are 2q (even) and 2q + 1 (odd)
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
          mma_f16(acc.o[mt][nt], a[mt], even[0], even[1]);
          mma_f16(acc.o[mt][nt + 1], a[mt], odd[0], odd[1]);
          mma_f16(acc.o[mt][nt + 2], a[mt], even[2], even[3]);
          mma_f16(acc.o[mt][nt + 3], a[mt], odd[2], odd[3]);
        }
      }
    }
  }
}

// Calls fn(head, dim, values, count) for each run of a thread's consecutive output dims of
// m tile mt, row half `half` (head g + 8 half): 4 dims per e4m3 chunk (n tiles 2q, 2q + 1:
// dims 16q + 4c .. 16q + 4c + 3), 2 per bf16 n tile (dims 8n + 2c, 8n + 2c + 1).
template <typename Value, typename Fn>
SMLA_DEVICE void for_each_output(const Lanes& t, int mt, int half, Value value, Fn fn) {
  const int e = 2 * half;
#pragma unroll
  for (int j = 0; j < kPvGroups; ++j) {
    const int d0 = t.group_dim0(j);
    if (bf16_dims(d0)) {
#pragma unroll
      for (int n = 0; n < 8; ++n) {
        const float v[4] = {value(8 * j + n, e), value(8 * j + n, e + 1), 0.0f, 0.0f};
        fn(d0 + 8 * n + 2 * t.c, v, 2);
      }
    } else {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int nt = 8 * j + 2 * q;
        const float v[4] = {value(nt, e), value(nt + 1, e), value(nt, e + 1), value(nt + 1, e + 1)};
        fn(d0 + 16 * q + 4 * t.c, v, 4);
      }
    }
  }
}

// ---- the tile loop ----------------------------------------------------------------------------

constexpr bool kFolds = kGeo.segments > 1;

SMLA_DEVICE void run_cta(const DecodeParams& p, unsigned char* smem, const WorkItem& w) {
  const Lanes t = make_lanes();
  float* maxima = (float*)(smem + kGeo.reduce_offset);  // [head][warp]
  float* sums = maxima + kHeadsPerCta * kWarps;         // [head][warp]

  Accumulators acc;
  // The folded total (whole rows, prefix items), its (max, sum) per head (every thread of a head
  // folds the same values, so each keeps its own copy).
  float total[kMTiles][kPvNTiles][4];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int nt = 0; nt < kPvNTiles; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        acc.o[mt][nt][e] = 0.0f;
        if (kFolds) total[mt][nt][e] = 0.0f;
      }
  float seg_max[kMTiles][2], seg_sum[kMTiles][2];  // the segment's reference and this thread's sums
  float total_max[kMTiles][2], total_sum[kMTiles][2];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      seg_max[mt][h] = total_max[mt][h] = neg_inf();
      seg_sum[mt][h] = total_sum[mt][h] = 0.0f;
    }

  const TileWalk walk = make_walk(w.length0, w.length1, w.begin, w.end);
  GatherRing ring;
  ring.start(p, smem, walk, w.length0, w.length1, w.row);
  load_query_tile<kE4m3Scores>(p, smem, w.row, w.head_group);
  __syncthreads();
  float factor[kMTiles][2];  // the score factors of the thread's heads
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) factor[mt][h] = score_factor(p, smem, t.head(mt, h));

  int tile = walk.first;
  int stage = 0;
  bool segment_fresh = true;
  ValueScales<kPvGroups> value_scales;
  for (int i = 0; i < walk.count; ++i) {
    cp_async_wait<kStages - 2>();
    __syncthreads();
    ring.advance(p, smem, walk, w.length0, w.length1, w.row, i, stage);

    float x[kMTiles][4];
    {
      float partial[kMTiles][2][4];
      if (kBf16Kv) {
        bf16_scores(smem, t, stage, partial);
      } else {
        fp8_scores(smem, t, stage, partial);
      }
      exchange_scores(smem, t, partial, x);
    }
    const u8* valid = smem + kGeo.valid_offset + stage * kTileEntries;
    const bool valid0 = valid[t.score_entry(0)] != 0, valid1 = valid[t.score_entry(1)] != 0;
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const bool ok = (e & 1) ? valid1 : valid0;
        x[mt][e] = ok ? x[mt][e] * factor[mt][e >> 1] : neg_inf();
      }

    // The lazy pass (decode_kernel.cuh): probabilities against the current reference, unless
    // a score passes it by the margin. A segment's first tile goes to the exact path.
    bool raise = false;
    float prob[kMTiles][4];
    if (!segment_fresh) {
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
    if (!segment_fresh && !syncthreads_any(raise)) {
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          seg_sum[mt][h] =
              __fadd_rn(__fadd_rn(seg_sum[mt][h], prob[mt][2 * h]), prob[mt][2 * h + 1]);
        }
    } else {
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const float v = quad_max(fmaxf(x[mt][2 * h], x[mt][2 * h + 1]));
          if (t.c == 0) maxima[t.head(mt, h) * kWarps + t.warp] = v;
        }
      __syncthreads();
      float rescale[kMTiles][2];
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          // A head moves its reference only when its own scores pass the margin, so a head's
          // bits do not depend on the other heads of its CTA (narrow splits).
          const float tile_max = read_slots<true>(maxima, t.head(mt, h));
          const float m = seg_max[mt][h];
          const bool raises = tile_max > m + kLazyMargin;
          rescale[mt][h] = m == neg_inf() ? 0.0f : raises ? exp2_approx(m - tile_max) : 1.0f;
          if (raises) seg_max[mt][h] = tile_max;
        }
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        float exact[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          exact[e] = x[mt][e] == neg_inf() ? 0.0f : exp2_approx(x[mt][e] - seg_max[mt][e >> 1]);
        }
        store_probabilities(smem, t, mt, 0, exact[0], exact[1]);
        store_probabilities(smem, t, mt, 1, exact[2], exact[3]);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          seg_sum[mt][h] = __fadd_rn(
              __fadd_rn(__fmul_rn(seg_sum[mt][h], rescale[mt][h]), exact[2 * h]), exact[2 * h + 1]);
        }
      }
      if (!segment_fresh) {
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
          for (int nt = 0; nt < kPvNTiles; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc.o[mt][nt][e] *= rescale[mt][e >> 1];
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
    if (!segment_ends) continue;

    if (kPacked) finish_value_scales(t, value_scales, scale);
      // The segment's sum per head: the thread's sums over its quad, then the warps in order.
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
    if (kFolds && p.folds) {
      FoldStep step[kMTiles][2];
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
  }

  // The (max, sum) of what is finished: the folded total, or the CTA's one segment.
  if (!(kFolds && p.folds)) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        total_max[mt][h] = seg_max[mt][h];
        total_sum[mt][h] = walk.count > 0 ? seg_sum[mt][h] : 0.0f;
      }
  }

  if (p.split) {
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
    // A segment with no nonempty tile leaves its values unwritten: its max is -inf, and the
    // combine kernel never uses them.
    if (walk.count == 0) return;
    // A prefix item's values are its folded total.
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
    return;
  }
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

}  // namespace decode
}  // namespace smla

#include "decode_entry.cuh"
