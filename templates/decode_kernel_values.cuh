// Part of the entries-on-M decode kernel (decode_kernel.cuh): the output accumulators, their
// fold at a segment's end, and the value product O^T += V^T P^T straight from the stage.
#pragma once

#include "decode_kernel_lanes.cuh"

namespace smla {
namespace decode {

// ---- folds and the value product ----------------------------------------------------------------

// NOTE: the fp8 layouts keep the folded total (whole rows, prefix items) in shared memory
// (kGeo.total_offset): it is touched once per segment, and its registers are what the fp8
// conversions need.
constexpr bool kTotalInSmem = total_in_smem(kShape, kGeo.segments);
constexpr bool kTotalInRegisters = kFolds && !kTotalInSmem;

// O^T of this warp's dims: element e of [mt][nt] is output row e / 2 of m tile mt (Lanes::pv_dim),
// head 8nt + 2c + (e & 1), i.e. combo 2nt + (e & 1).
struct Accumulators {
  float o[kPvMTiles][kNTiles][4];
  // The folded total (whole rows, prefix items), when in registers.
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

}  // namespace decode
}  // namespace smla
