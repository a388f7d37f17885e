// Part of the entries-on-M decode kernel (decode_kernel.cuh): its shape constants and each
// thread's fixed place in the tiles (Lanes), which the scores, softmax and value parts use.
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

// kE4m3Scores (the key's qk field): fp8 q meets the uniform layout's e4m3 values in e4m3 MMAs
// (m16n8k32): the raw bytes of the stage are the A fragments and the query tile keeps q's
// bytes, so Q.K converts nothing.
static_assert(!kE4m3Scores || (kQFp8 && kLayout == kLayoutUniform), "e4m3 scores: fp8 q, uniform KV");

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

}  // namespace decode
}  // namespace smla
