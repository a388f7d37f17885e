// Part of the heads-on-M decode kernel (decode_heads_m_kernel.cuh): its shape constants and each
// thread's fixed place in the tiles (Lanes), which the scores and value parts use.
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
static_assert(!kE4m3Scores || (kQFp8 && kLayout == kLayoutUniform),
              "e4m3 scores: fp8 q, uniform KV");

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

}  // namespace decode
}  // namespace smla
