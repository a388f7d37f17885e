// Part of the heads-on-M decode kernel (decode_heads_m_kernel.cuh): the scores S = Q K^T of a
// tile, each warp's partial sums over its half of the dims, and their meeting in shared memory.
#pragma once

#include "decode_heads_m_lanes.cuh"

namespace smla {
namespace decode {

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

}  // namespace decode
}  // namespace smla
