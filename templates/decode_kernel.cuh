// The decode kernel family: sparse MQA over a 512-dim latent for one row per CTA (or one row
// segment per CTA in split mode), heads_per_cta (8, 16 or 32) heads at a time, from paged KV
// caches. Design and measurements: docs/decode-kernel.md.
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
// from a fresh softmax state and is folded into the running total at its end, in the CTA in
// whole-row mode or in the combine kernel in split mode, with identical operations.
//
// The generated prologue defines namespace smla::cfg (see codegen/kernel_source.cpp).
#pragma once

#include "decode_common.cuh"

namespace smla {
namespace decode {

constexpr ScoreOwnership kOwn = score_ownership(kShape);

constexpr int kEntryBlocks = kTileEntries / 16;
constexpr int kDimParts = kWarps / kEntryBlocks;  // warps that share an entry block
constexpr int kGroupsPerWarp = 8 / kDimParts;     // 64-dim groups of a warp's scores
constexpr int kNTiles = kHeadsPerCta / 8;
constexpr int kCombos = 2 * kNTiles;         // (n tile, head pair) columns of a thread
constexpr int kValues = 4 * kNTiles;         // score values of a thread: 2 rows x kCombos
constexpr int kOwned = kValues / kDimParts;  // of which it sums and exponentiates
// Columns among the owned values: owned value k is in column k % kOwnedCombos.
constexpr int kOwnedCombos = kOwn.both_rows ? kOwned / 2 : 1;
constexpr int kPvDims = kHeadDim / kWarps;  // output dims a warp accumulates
constexpr int kPvMTiles = kPvDims / 16;
constexpr int kPvKSteps = kTileEntries / 16;
constexpr int kPvGroups = warp_value_groups(kShape);  // 64-dim groups of a warp's value dims
constexpr int kGroupMTiles = kPvMTiles / kPvGroups;   // m tiles of one of them

static_assert(kTileEntries == 32 || kTileEntries == 64, "tile entries: 32 or 64");
static_assert(kHeadsPerCta == 8 || kHeadsPerCta == 16 || kHeadsPerCta == 32, "heads per CTA");
static_assert(kDimParts == 2 || kDimParts == 4, "2 or 4 warps per entry block");
static_assert(kWarps == kDimParts * kEntryBlocks, "whole entry blocks");
static_assert(kOwned >= 1 && kValues % kDimParts == 0, "every score value has one owner");
static_assert(kOwn.both_rows || kOwned == 1, "Lanes::owned_prob_at: one value or both rows");
static_assert(kPvDims % 16 == 0 && kTileEntries % 16 == 0, "whole MMA tiles");

// fp8 q meets the uniform layout's e4m3 values in e4m3 MMAs (m16n8k32): the raw bytes of the
// stage are the A fragments and the query tile keeps q's bytes, so Q.K converts nothing. The
// products are exact in fp32 either way; only the order of the fp32 sums changes, so the choice
// is per problem (its narrow splits must give the same bits). Measured on the H200 against the
// f16 products: 64 and 128 heads 2.4-3.7% faster; 16 heads 3.5% and 8 heads 1.2% slower at 256
// rows (their 128-register kernels), so only problems of more than 16 heads (32-head CTAs).
// The packed layout, whose rope group needs the 16-bit query layout too, spilled at 16 heads.
constexpr bool kE4m3Scores = kQFp8 && kLayout == kLayoutUniform && kNumHeads > 16;

// ---- per-thread offsets ------------------------------------------------------------------------

// The shared-memory byte offsets a thread uses every tile, computed once (relative to stage 0
// where a stage applies), so the tile loop adds constants instead of recomputing them.
struct Lanes {
  int warp, lane, g, c;      // g: fragment row group, c: fragment column pair
  int block, part;           // entry block (16 entries) and part of the dims of the scores
  u32 raw;                   // fp8 scores: entry g's chunk c of this part's first group
  u32 rope[2];               // fp8 scores: entry g's rope chunks c, c + 4 (packed layout)
  u32 scale;                 // fp8 scores: entry g's scale byte of this part's first group
  u32 score_a;               // bf16 scores: this lane's ldmatrix row of the stage, unswizzled
  u32 score_swizzle;         // bf16 scores: 16 * (the lane's chunk ^ row) for k-step 0
  u32 score_b;               // scores: this lane's ldmatrix row of the query tile (k-step 0)
  u32 score_b8;              // e4m3 scores: the same for the query's e4m3 bytes (kE4m3Scores)
  u32 pv_probs;              // values: this lane's ldmatrix row of P (k-step 0)
  u32 pv_values[kPvMTiles];  // values: this lane's ldmatrix.trans row of V (stage 0, k-step 0)
  u32 owned_prob;            // softmax: owned value 0's (head, entry) in a probability tile

  SMLA_DEVICE int score_entry(int r) const { return 16 * block + g + 8 * r; }
  // Owned value k: v = part + kDimParts * k of the thread's kValues, v = r * kCombos + combo.
  SMLA_DEVICE int owned_combo(int k) const { return (part + kDimParts * k) % kCombos; }
  SMLA_DEVICE int owned_row(int k) const { return (part + kDimParts * k) / kCombos; }
  // The head of column combo (n tile combo / 2, head combo % 2 of the thread's pair).
  SMLA_DEVICE int head(int combo) const { return 8 * (combo >> 1) + 2 * c + (combo & 1); }
  // Owned value k's byte offset in a probability tile, from owned value 0's by a constant: an
  // owner of both rows steps by kDimParts combos (4 * kDimParts heads: kDimParts is even), and
  // its second half is row g + 8.
  SMLA_DEVICE u32 owned_prob_at(int k) const {
    if (!kOwn.both_rows) return owned_prob;  // one owned value
    const int half = kOwned / 2;
    return owned_prob + 2 * (4 * kDimParts * (k % half) * kGeo.prob_stride + 8 * (k / half));
  }
  // The first of the dims of value group j (kPvGroups per warp).
  SMLA_DEVICE int group_dim0(int j) const { return warp * kPvDims + 64 * j; }
  // Whether m tile mt is one of an fp8 pair, whose output dims are adjacent: pv_dim(mt + 1, r)
  // is pv_dim(mt, r) + 1 for even mt, so results go out two at a time.
  SMLA_DEVICE bool pairs_dims(int mt) const { return !bf16_dims(warp * kPvDims + 16 * mt); }
  // The output dim of accumulator row r (0: g, 1: g + 8) of m tile mt. A bf16 m tile holds 16
  // consecutive dims; fp8 m tiles come in pairs over 32 dims, the even dims in the first.
  SMLA_DEVICE int pv_dim(int mt, int r) const {
    const int d = warp * kPvDims + 16 * mt;
    if (bf16_dims(d)) return d + 8 * r + g;
    return warp * kPvDims + 32 * (mt / 2) + 16 * r + 2 * g + (mt & 1);
  }
};

SMLA_DEVICE Lanes make_lanes() {
  Lanes t;
  t.warp = threadIdx.x / 32;
  t.lane = threadIdx.x & 31;
  t.g = t.lane >> 2;
  t.c = t.lane & 3;
  t.block = t.warp % kEntryBlocks;
  t.part = t.warp / kEntryBlocks;
  const int entry = 16 * t.block + t.g;  // entry + 8 has the same swizzle
  const int group = t.part * kGroupsPerWarp;
  const u32 entry_base = kGeo.raw_offset + entry * kGeo.entry_bytes;
  t.raw = entry_base + 16 * stored_chunk(entry, 4 * group + t.c);
  // Chunks c and c + 4 of the rope (not 2c and 2c + 1): a quarter warp's 16-byte reads then
  // meet no bank conflict.
  t.rope[0] = entry_base + 16 * stored_chunk(entry, 28 + t.c);
  t.rope[1] = entry_base + 16 * stored_chunk(entry, 32 + t.c);
  t.scale = kGeo.scale_offset + entry * 8 + group;
  const int m = t.lane >> 3, row = t.lane & 7;
  // A = the block's 16 entries x 16 dims: matrices (rows 0-7 | 8-15) x (dims 0-7 | 8-15).
  t.score_a = kGeo.raw_offset + (16 * t.block + row + 8 * (m & 1)) * 1024 + 128 * group;
  t.score_swizzle = 16 * ((m >> 1) ^ row);
  // B = 16 dims x 8 heads, two n tiles per ldmatrix.x4: (heads 0-7: dims 0-7 | 8-15), (8-15).
  t.score_b =
      kGeo.query_offset + (8 * (m >> 1) + row) * kGeo.query_stride + 2 * 64 * group + 16 * (m & 1);
  // B = 32 dims x 8 heads of both k-steps of a group, the four matrices in order (e4m3_position).
  t.score_b8 = kGeo.query_offset + row * kGeo.query_stride + 64 * group + 16 * m;
  t.pv_probs =
      kGeo.prob_offset + 2 * ((8 * (m >> 1) + row) % kHeadsPerCta * kGeo.prob_stride + 8 * (m & 1));
  // V^T fragments: matrices (entries 0-7 | 8-15) x (two chunks), chunk in the low bit of m.
  // bf16: a chunk is 8 dims, an m tile's two chunks are its 16 dims. fp8: a chunk is 16 dims,
  // a pair of m tiles takes 32 (even dims to the first, odd to the second: accumulate_values).
  const int pv_entry = 8 * (m >> 1) + row;
#pragma unroll
  for (int mt = 0; mt < kPvMTiles; ++mt) {
    const int d = t.warp * kPvDims + 16 * mt;
    int chunk;
    if (kBf16Kv) {
      chunk = d / 8;
    } else if (bf16_dims(d)) {
      chunk = 28 + (d - kRopeDim0) / 8;
    } else {
      chunk = (t.warp * kPvDims + 32 * (mt / 2)) / 16;
    }
    chunk += m & 1;
    t.pv_values[mt] =
        kGeo.raw_offset + pv_entry * kGeo.entry_bytes + 16 * stored_chunk(pv_entry, chunk);
  }
  t.owned_prob = 2 * (t.head(t.owned_combo(0)) * kGeo.prob_stride + t.score_entry(t.owned_row(0)));
  return t;
}

// ---- scores ---------------------------------------------------------------------------------

// Score accumulators: with one n tile, even and odd k-steps accumulate apart, so that two
// independent MMA chains hide the MMA latency. (Measured on the H200: 4 chains at 8 heads are
// no faster; 2 chains at 16 heads are 1-4% slower.) The 8-head CTAs of a wider problem's narrow
// split keep one chain: their scores must be the bits of its 16-head CTAs.
constexpr int kScoreChains = kNTiles == 1 && kNumHeads <= 8 ? 2 : 1;
struct ScoreChains {
  float s[kScoreChains][kNTiles][4];
};

SMLA_DEVICE void clear_scores(ScoreChains& acc) {
#pragma unroll
  for (int c = 0; c < kScoreChains; ++c)
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc.s[c][nt][e] = 0.0f;
}

// S^T += A (16 entries x 16 k) B (k-step kk of the query tile, all heads), in f16 or bf16.
template <bool kF16>
SMLA_DEVICE void score_step(u32 smem_base, const Lanes& t, int kk, const u32 (&a)[4],
                            ScoreChains& acc) {
  u32 b[kNTiles][2];
#pragma unroll
  for (int np = 0; np < kNTiles; np += 2) {
    const u32 q = smem_base + t.score_b + np * 8 * kGeo.query_stride + 32 * kk;
    if (kNTiles == 1) {
      ldmatrix_x2(q, b[np][0], b[np][1]);
    } else {
      ldmatrix_x4(q, b[np][0], b[np][1], b[np + 1][0], b[np + 1][1]);
    }
  }
#pragma unroll
  for (int nt = 0; nt < kNTiles; ++nt) {
    if (kF16) {
      mma_f16(acc.s[kk % kScoreChains][nt], a, b[nt][0], b[nt][1]);
    } else {
      mma_bf16(acc.s[kk % kScoreChains][nt], a, b[nt][0], b[nt][1]);
    }
  }
}

SMLA_DEVICE void sum_chains(const ScoreChains& acc, float (&s)[kNTiles][4]) {
#pragma unroll
  for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      s[nt][e] =
          kScoreChains == 2 ? acc.s[0][nt][e] + acc.s[kScoreChains - 1][nt][e] : acc.s[0][nt][e];
}

// Partial scores S^T (rows g and g + 8 of the warp's entry block, all heads) over this warp's
// part of the dims, for the fp8 layouts. Each thread converts 16 e4m3 dims of entries g and
// g + 8 per 64-dim group to f16 (exactly, one instruction per pair) and uses them as its A
// fragments (query_position gives the k order); the packed rope group is bf16 as stored.
// The packed layout's scales multiply each group's partial sums (fp32, any scale byte).
SMLA_DEVICE void fp8_scores(unsigned char* smem, const Lanes& t, int stage,
                            float (&s)[kNTiles][4]) {
  const u32 stage_bytes = stage * kTileEntries * kGeo.entry_bytes;
  const u8* scales = smem + t.scale + stage * kTileEntries * 8;
  const u32 base = smem_u32(smem);
  ScoreChains acc;  // the uniform layout's scores, or one packed group's partial sums
  clear_scores(acc);
  float scaled[kNTiles][4];  // packed: the sum of the groups' scaled partial sums
#pragma unroll
  for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) scaled[nt][e] = 0.0f;
#pragma unroll
  for (int gi = 0; gi < kGroupsPerWarp; ++gi) {
    const int kk0 = 4 * gi;  // k-steps from the part's first group
    const bool rope = kPacked && t.part * kGroupsPerWarp + gi == kRopeDim0 / 64;
    if (kPacked) clear_scores(acc);
    if (rope) {
      uint4 w[2][2];  // [row][chunk]: bf16 dims 8c + 32 * chunk + 2i, +1 in word i
#pragma unroll
      for (int r = 0; r < 2; ++r)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          w[r][h] = *(const uint4*)(smem + t.rope[h] + stage_bytes + 8 * kGeo.entry_bytes * r);
#pragma unroll
      for (int h = 0; h < 2; ++h) {  // chunk h feeds k-steps 2h and 2h + 1
        const u32 a0[4] = {w[0][h].x, w[1][h].x, w[0][h].y, w[1][h].y};
        const u32 a1[4] = {w[0][h].z, w[1][h].z, w[0][h].w, w[1][h].w};
        score_step<false>(base, t, kk0 + 2 * h, a0, acc);
        score_step<false>(base, t, kk0 + 2 * h + 1, a1, acc);
      }
    } else {
      uint4 x[2];  // rows g, g + 8: word j holds dims 16c + 4j .. 16c + 4j + 3
#pragma unroll
      for (int r = 0; r < 2; ++r)
        x[r] = *(const uint4*)(smem + t.raw + stage_bytes + 64 * gi + 8 * kGeo.entry_bytes * r);
      const u32 words[2][4] = {{x[0].x, x[0].y, x[0].z, x[0].w}, {x[1].x, x[1].y, x[1].z, x[1].w}};
      if (kE4m3Scores) {  // two k-steps of 32 dims (e4m3_position)
        u32 b[kNTiles][4];
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt) {
          ldmatrix_x4(base + t.score_b8 + nt * 8 * kGeo.query_stride + 64 * gi, b[nt][0], b[nt][1],
                      b[nt][2], b[nt][3]);
        }
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          const u32 a[4] = {words[0][2 * j], words[1][2 * j], words[0][2 * j + 1],
                            words[1][2 * j + 1]};
#pragma unroll
          for (int nt = 0; nt < kNTiles; ++nt) {
            mma_e4m3(acc.s[(2 * gi + j) % kScoreChains][nt], a, b[nt][2 * j], b[nt][2 * j + 1]);
          }
        }
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          u32 a[4];  // k-step j: (row g | g + 8) x (dims 4j, 4j + 1 | 4j + 2, 4j + 3)
          e4m3x4_to_f16x2(words[0][j], a[0], a[2]);
          e4m3x4_to_f16x2(words[1][j], a[1], a[3]);
          score_step<true>(base, t, kk0 + j, a, acc);
        }
      }
    }
    if (kPacked) {
      float sums[kNTiles][4];
      sum_chains(acc, sums);
      const float scale[2] = {rope ? 1.0f : ue8m0_value(scales[gi]),
                              rope ? 1.0f : ue8m0_value(scales[64 + gi])};
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) scaled[nt][e] = fmaf(sums[nt][e], scale[e >> 1], scaled[nt][e]);
    }
  }
  if (kPacked) {
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) s[nt][e] = scaled[nt][e];
  } else {
    sum_chains(acc, s);
  }
}

// The same for the bf16 layout, whose gathered stage is the value tile: A from ldmatrix.
SMLA_DEVICE void bf16_scores(unsigned char* smem, const Lanes& t, int stage,
                             float (&s)[kNTiles][4]) {
  const u32 base = smem_u32(smem);
  const u32 values = base + t.score_a + stage * kTileEntries * 1024;
  ScoreChains acc;
  clear_scores(acc);
#pragma unroll
  for (int kk = 0; kk < 4 * kGroupsPerWarp; ++kk) {
    // k-step kk reads value chunks 2j, 2j + 1 of its group (j = kk % 4), swizzled by the row:
    // 16 * ((2j + hi) ^ row) = 32j ^ (16 * (hi ^ row)).
    u32 a[4];
    ldmatrix_x4(values + 128 * (kk / 4) + ((32 * (kk % 4)) ^ t.score_swizzle), a[0], a[1], a[2],
                a[3]);
    score_step<false>(base, t, kk, a, acc);
  }
  sum_chains(acc, s);
}

// N consecutive floats of shared memory (N = 1, 2 or a multiple of 4, aligned to 4N bytes up to
// 16) in as few accesses as possible.
template <int N>
SMLA_DEVICE void store_floats(float* to, const float (&v)[N]) {
  static_assert(N == 1 || N == 2 || N % 4 == 0, "1, 2 or a multiple of 4 floats");
  if constexpr (N % 4 == 0) {
#pragma unroll
    for (int i = 0; i < N; i += 4)
      *(float4*)(to + i) = make_float4(v[i], v[i + 1], v[i + 2], v[i + 3]);
  } else if constexpr (N == 2) {
    *(float2*)to = make_float2(v[0], v[1]);
  } else {
    *to = v[0];
  }
}
template <int N>
SMLA_DEVICE void load_floats(const float* from, float (&v)[N]) {
  static_assert(N == 1 || N == 2 || N % 4 == 0, "1, 2 or a multiple of 4 floats");
  if constexpr (N % 4 == 0) {
#pragma unroll
    for (int i = 0; i < N; i += 4) {
      const float4 x = *(const float4*)(from + i);
      v[i] = x.x, v[i + 1] = x.y, v[i + 2] = x.z, v[i + 3] = x.w;
    }
  } else if constexpr (N == 2) {
    const float2 x = *(const float2*)from;
    v[0] = x.x, v[1] = x.y;
  } else {
    v[0] = *from;
  }
}

// Sums every part's partial scores of the values this thread owns, in part order, scaled to
// log2 units by their heads' factors (score_factor, read once per CTA); -inf for invalid entries.
SMLA_DEVICE void owned_scores(unsigned char* smem, const Lanes& t, int stage,
                              const float (&factor)[kOwnedCombos], float (&s)[kNTiles][4],
                              float (&x)[kOwned]) {
  // Laid out [warp][owner part][lane][owned value]: a thread writes each owner's values, and
  // reads each part's values for it, as one access.
  float* exchange = (float*)(smem + kGeo.exchange_offset);
#pragma unroll
  for (int owner = 0; owner < kDimParts; ++owner) {
    float values[kOwned];
#pragma unroll
    for (int k = 0; k < kOwned; ++k) {
      // v = r * kCombos + combo; the loops are unrolled, so the index is a constant.
      const int v = owner + kDimParts * k;
      values[k] = s[(v % kCombos) >> 1][2 * (v / kCombos) + (v & 1)];
    }
    store_floats(exchange + ((t.warp * kDimParts + owner) * 32 + t.lane) * kOwned, values);
  }
  named_barrier_sync(1 + t.block, 32 * kDimParts);
  float sum[kOwned];
#pragma unroll
  for (int part = 0; part < kDimParts; ++part) {
    float values[kOwned];
    load_floats(
        exchange + (((t.block + kEntryBlocks * part) * kDimParts + t.part) * 32 + t.lane) * kOwned,
        values);
#pragma unroll
    for (int k = 0; k < kOwned; ++k) sum[k] = part == 0 ? values[k] : sum[k] + values[k];
  }
#pragma unroll
  for (int k = 0; k < kOwned; ++k) {
    const bool valid =
        smem[kGeo.valid_offset + stage * kTileEntries + t.score_entry(t.owned_row(k))] != 0;
    x[k] = valid ? sum[k] * factor[k % kOwnedCombos] : neg_inf();
  }
}

// ---- softmax --------------------------------------------------------------------------------

// Reduces v over the 8 lanes of a fragment column (the g bits of the lane).
SMLA_DEVICE float column_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 4));
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 8));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 16));
}
SMLA_DEVICE float column_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 4);
  v += __shfl_xor_sync(0xffffffffu, v, 8);
  return v + __shfl_xor_sync(0xffffffffu, v, 16);
}

// Writes the column maximum of each owned head into its slot (the order of a maximum does not
// matter); `values` are per owned value.
SMLA_DEVICE void write_max_slots(const Lanes& t, float* slots, const float (&values)[kOwned]) {
  constexpr int kColumns = kOwn.both_rows ? kOwned / 2 : kOwned;
#pragma unroll
  for (int k = 0; k < kColumns; ++k) {
    float v = values[k];
    if (kOwn.both_rows) v = fmaxf(v, values[k + kColumns]);
    v = column_max(v);
    const int slot = t.block * kOwn.row_slots + (kOwn.row_slots == 2 ? t.owned_row(k) : 0);
    if (t.g == 0) slots[t.head(t.owned_combo(k)) * kOwn.slots_per_head + slot] = v;
  }
}

// NOTE: a problem of more than 8 heads may run in CTAs of 8, 16 or 32 heads (the narrow splits
// of autotune/heuristics.h), which must give a head the same bits: its softmax reference moves
// only on its own scores, and its sums add in one order whoever owns them. An 8-head problem
// has one width and keeps the cheaper CTA-wide forms.
constexpr bool kHeadsAlone = kNumHeads > 8;
// Sum slots per head: per entry block, or per (entry block, row) when one-row owners skip the
// handoff below.
constexpr int kSumSlots = kOwn.both_rows || kHeadsAlone ? kEntryBlocks : 2 * kEntryBlocks;

// Writes a segment's sum of each owned head into its slot. Owners of both rows add row g + 8 to
// row g before the column sum; with kHeadsAlone an owner of one row (kOwned == 1) does the same
// after the owner of row g + 8 of its column (part + kCombos) hands its sums over through the
// exchange area (every read of it is behind a block barrier by now), so the order is the same
// at every width. Called by every thread (it holds a barrier then).
SMLA_DEVICE void write_sum_slots(unsigned char* smem, const Lanes& t, float* slots,
                                 const float (&sums)[kOwned]) {
  constexpr int kColumns = kOwn.both_rows ? kOwned / 2 : kOwned;
  if constexpr (!kOwn.both_rows && !kHeadsAlone) {
    const float v = column_sum(sums[0]);
    if (t.g == 0) slots[t.head(t.owned_combo(0)) * kSumSlots + 2 * t.block + t.owned_row(0)] = v;
    return;
  }
  float partner[kColumns];
  if constexpr (kOwn.both_rows) {
#pragma unroll
    for (int k = 0; k < kColumns; ++k) partner[k] = sums[k + kColumns];
  } else {
    // kOwned == 1 here (the static_assert on kOwn above).
    float* handoff = (float*)(smem + kGeo.exchange_offset);
    const int pair = (t.part % kCombos) * kEntryBlocks + t.block;  // column part % kCombos
    if (t.owned_row(0) == 1) handoff[pair * 32 + t.lane] = sums[0];
    __syncthreads();
    if (t.owned_row(0) == 1) return;
    partner[0] = handoff[pair * 32 + t.lane];
  }
#pragma unroll
  for (int k = 0; k < kColumns; ++k) {
    const float v = column_sum(sums[k] + partner[k]);
    if (t.g == 0) slots[t.head(t.owned_combo(k)) * kSumSlots + t.block] = v;
  }
}

// Reads the kSlots slots of one head and reduces them in slot order.
template <bool kMax, int kSlots>
SMLA_DEVICE float read_slots(const float* slots, int head) {
  const float* s = slots + head * kSlots;
  float r = kMax ? neg_inf() : 0.0f;
#pragma unroll
  for (int i = 0; i < kSlots; i += 2) {
    const float2 v = *(const float2*)(s + i);
    r = kMax ? fmaxf(fmaxf(r, v.x), v.y) : r + v.x + v.y;
  }
  return r;
}
SMLA_DEVICE float read_max(const float* slots, int head) {
  return read_slots<true, kOwn.slots_per_head>(slots, head);
}
SMLA_DEVICE float read_sum(const float* slots, int head) {
  return read_slots<false, kSumSlots>(slots, head);
}

// a[i] for a run-time i, without indexing a register array (which would go to local memory).
template <int N>
SMLA_DEVICE float pick(const float (&a)[N], int i) {
  float r = a[0];
#pragma unroll
  for (int k = 1; k < N; ++k) r = i == k ? a[k] : r;
  return r;
}

// ---- the tile loop ----------------------------------------------------------------------------

constexpr bool kFolds = kGeo.segments > 1;
// NOTE: the fp8 layouts keep whole-row mode's folded total in shared memory (kGeo.total_offset):
// it is touched once per segment, and its registers are what the fp8 conversions need.
constexpr bool kTotalInSmem = total_in_smem(kShape, kGeo.segments);
constexpr bool kTotalInRegisters = kFolds && !kTotalInSmem;

// O^T of this warp's dims: element e of [mt][nt] is output row e / 2 of m tile mt (Lanes::pv_dim),
// head 8nt + 2c + (e & 1), i.e. combo 2nt + (e & 1).
struct Accumulators {
  float o[kPvMTiles][kNTiles][4];
  // Whole-row mode's folded total, when in registers.
  float total[kTotalInRegisters ? kPvMTiles : 1][kTotalInRegisters ? kNTiles : 1][4];
};

// Element (mt, nt, e) of the folded total: a register, or in this thread's own 16 bytes of
// shared memory per (mt, nt) (no other thread touches them, so no barrier orders them; the fold
// reads and writes each as one vector).
SMLA_DEVICE float& total_at(unsigned char* smem, Accumulators& acc, int mt, int nt, int e) {
  if (kTotalInSmem) {
    float4* totals = (float4*)(smem + kGeo.total_offset);
    return (&totals[(mt * kNTiles + nt) * kThreads + threadIdx.x].x)[e];
  }
  return acc.total[kTotalInRegisters ? mt : 0][kTotalInRegisters ? nt : 0][e];
}

// Folds the segment's accumulators into the total and clears them for the next segment.
SMLA_DEVICE void fold_accumulators(unsigned char* smem, Accumulators& acc,
                                   const FoldStep (&step)[kCombos]) {
#pragma unroll
  for (int mt = 0; mt < kPvMTiles; ++mt)
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt) {
      float4 total =
          kTotalInSmem
              ? *(float4*)&total_at(smem, acc, mt, nt, 0)
              : make_float4(total_at(smem, acc, mt, nt, 0), total_at(smem, acc, mt, nt, 1),
                            total_at(smem, acc, mt, nt, 2), total_at(smem, acc, mt, nt, 3));
      float* o = acc.o[mt][nt];  // element e belongs to combo 2nt + (e & 1)
      total.x = fold_value(total.x, o[0], step[2 * nt]);
      total.y = fold_value(total.y, o[1], step[2 * nt + 1]);
      total.z = fold_value(total.z, o[2], step[2 * nt]);
      total.w = fold_value(total.w, o[3], step[2 * nt + 1]);
      if (kTotalInSmem) {
        *(float4*)&total_at(smem, acc, mt, nt, 0) = total;
      } else {
        total_at(smem, acc, mt, nt, 0) = total.x, total_at(smem, acc, mt, nt, 1) = total.y;
        total_at(smem, acc, mt, nt, 2) = total.z, total_at(smem, acc, mt, nt, 3) = total.w;
      }
      o[0] = o[1] = o[2] = o[3] = 0.0f;
    }
}

// Probability v at byte `at` of the tile (Lanes::owned_prob_at) for the value product: f16 for
// the fp8 layouts (P <= 2^15: kLazyMargin), bf16 for the bf16 layout; the packed layout's bf16
// rope dims take a bf16 copy.
SMLA_DEVICE void store_probability(unsigned char* smem, u32 at, float v) {
  *(u16*)(smem + kGeo.prob_offset + at) =
      (u16)(kBf16Kv ? pack_bf16x2(v, 0.0f) : pack_f16x2(v, 0.0f));
  if (kPacked) *(u16*)(smem + kGeo.rope_prob_offset + at) = (u16)pack_bf16x2(v, 0.0f);
}

// Multiplies the accumulators of value group j by `factor` (prepare_value_scales).
SMLA_DEVICE void scale_group(Accumulators& acc, int j, float factor) {
#pragma unroll
  for (int mt = j * kGroupMTiles; mt < (j + 1) * kGroupMTiles; ++mt)
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc.o[mt][nt][e] *= factor;
}

// B fragments of P (16 entries of k-step ks x all heads) from a probability tile.
SMLA_DEVICE void load_probabilities(u32 address, u32 (&b)[kNTiles][2]) {
#pragma unroll
  for (int np = 0; np < kNTiles; np += 2) {
    const u32 at = address + 2 * np * 8 * kGeo.prob_stride;
    if (kNTiles == 1) {
      ldmatrix_x2(at, b[np][0], b[np][1]);
    } else {
      ldmatrix_x4(at, b[np][0], b[np][1], b[np + 1][0], b[np + 1][1]);
    }
  }
}

// O^T += V^T P^T over the tile for this warp's dims. bf16 dims: ldmatrix.trans fragments of
// the stage. e4m3 dims: one ldmatrix.trans of the raw bytes gives each thread, per register,
// dims 2g and 2g + 1 of entries 2c and 2c + 1; a byte permute splits them into the pairs the
// A fragments of two m tiles want (even dims, odd dims), converted to f16 in one instruction
// each. The packed layout's probabilities are multiplied by the scale factors first.
SMLA_DEVICE void accumulate_values(unsigned char* smem, const Lanes& t, int stage,
                                   Accumulators& acc) {
  const u32 base = smem_u32(smem);
  const u32 values = base + stage * kTileEntries * kGeo.entry_bytes;
  const u32* factors =
      (const u32*)(smem + kGeo.value_factor_offset) + t.warp * kPvGroups * kTileEntries / 2;
  const u32 probs = base + t.pv_probs;
  const u32 bf16_probs = probs + (kPacked ? kGeo.rope_prob_offset - kGeo.prob_offset : 0);
#pragma unroll
  for (int ks = 0; ks < kPvKSteps; ++ks) {
#pragma unroll
    for (int j = 0; j < kPvGroups; ++j) {
      const int mt0 = j * kGroupMTiles;
      u32 b[kNTiles][2];
      if (bf16_dims(t.group_dim0(j))) {
        load_probabilities(bf16_probs + 32 * ks, b);
#pragma unroll
        for (int mt = mt0; mt < mt0 + kGroupMTiles; ++mt) {
          u32 a[4];
          ldmatrix_x4_trans(values + t.pv_values[mt] + 16 * kGeo.entry_bytes * ks, a[0], a[1], a[2],
                            a[3]);
#pragma unroll
          for (int nt = 0; nt < kNTiles; ++nt) mma_bf16(acc.o[mt][nt], a, b[nt][0], b[nt][1]);
        }
        continue;
      }
      load_probabilities(probs + 32 * ks, b);
      const u32 low = kPacked ? factors[j * kTileEntries / 2 + 8 * ks + t.c] : 0u;
      const u32 high = kPacked ? factors[j * kTileEntries / 2 + 8 * ks + t.c + 4] : 0u;
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt) {
        if (kPacked) b[nt][0] = mul_f16x2(b[nt][0], low), b[nt][1] = mul_f16x2(b[nt][1], high);
      }
#pragma unroll
      for (int mt = mt0; mt < mt0 + kGroupMTiles; mt += 2) {
        u32 r[4], even[4], odd[4];
        ldmatrix_x4_trans(values + t.pv_values[mt] + 16 * kGeo.entry_bytes * ks, r[0], r[1], r[2],
                          r[3]);
#pragma unroll
        for (int i = 0; i < 4; ++i) e4m3x4_to_f16x2(byte_perm(r[i], 0u, 0x3120u), even[i], odd[i]);
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt) {
          mma_f16(acc.o[mt][nt], even, b[nt][0], b[nt][1]);
          mma_f16(acc.o[mt + 1][nt], odd, b[nt][0], b[nt][1]);
        }
      }
    }
  }
}

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
        if (kFolds && !p.split) total_at(smem, acc, mt, nt, e) = 0.0f;
      }
  // Softmax state per combo of the output fragments: the segment's reference m (log2 units).
  float seg_max[kCombos];
  float owned_sum[kOwned];  // this thread's share of the running sum of its owned values
#pragma unroll
  for (int k = 0; k < kCombos; ++k) seg_max[k] = neg_inf();
#pragma unroll
  for (int k = 0; k < kOwned; ++k) owned_sum[k] = 0.0f;
  // Whole-row mode's folded (max, sum) per head, in shared memory rather than registers: it is
  // the same for every thread and used once per segment. Buffer `folds % 2` holds it; a fold
  // reads it and the first thread of each head writes the next buffer (both sides of the
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
      // In split mode (or with one segment) the CTA's only segment is the total: its sums stay
      // in their slots for the code after the loop.
      if (kFolds && !p.split) {
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

  // The (max, sum) of what is finished: the folded total of whole-row mode, or the CTA's one
  // segment (its sums are still in their slots; nothing to sum without a tile).
  float total_max[kCombos], total_sum[kCombos];
  if (kFolds && !p.split) {
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
