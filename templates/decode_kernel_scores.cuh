// Part of the entries-on-M decode kernel (decode_kernel.cuh): the scores S^T = K Q^T of a tile,
// each warp's partial sums over its dims, and their meeting in shared memory in part order.
#pragma once

#include "decode_kernel_lanes.cuh"

namespace smla {
namespace decode {

// ---- scores ---------------------------------------------------------------------------------

// Score accumulators: with one n tile, even and odd k-steps accumulate apart, so that two
// independent MMA chains hide the MMA latency (H200: 4 chains at 8 heads are no faster, 2 chains
// at 16 heads 1-4% slower). The 8-head CTAs of a wider problem's narrow
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

}  // namespace decode
}  // namespace smla
