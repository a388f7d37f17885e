// Part of the heads-on-M decode kernel (decode_heads_m_kernel.cuh): the slots through which the
// warps meet a head's maximum and sum, the probability tile, and the value product O = P V.
#pragma once

#include "decode_heads_m_lanes.cuh"

namespace smla {
namespace decode {

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

}  // namespace decode
}  // namespace smla
