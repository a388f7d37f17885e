// The decode kernel family: sparse MQA over a 512-dim latent for one row per CTA (or one row
// segment per CTA in split mode), heads_per_cta heads at a time, from paged KV caches.
//
// Roles. Every warp gathers its share of each tile's selected KV entries into a ring of
// shared-memory stages with cp.async (16-byte chunks, zero-filled for invalid entries, so nothing
// unselected is read), kStages - 1 tiles ahead. Each warp also owns 512 / warps of the head
// dimensions: it dequantizes its slice of every entry once, in registers, into the B fragments
// of the score MMA (and stores the same bf16 values for the value MMA), computes partial scores
// for all heads, which are summed through shared memory, runs its share of the online softmax,
// and accumulates its slice of the output. Heads are the M of the score MMA, so a CTA computes
// exactly heads_per_cta (16 or 32) heads, not 64.
//
// Dimension order. Within a 64-dim group a lane owns 16 consecutive dims of an entry, so one
// 16-byte shared load feeds four k-steps; the query fragments are loaded with the same
// permutation. The dot product is a sum over dims, so the order does not change the math.
//
// Segments. The row's tiles are cut into fixed segments (segment_fold.cuh): a segment starts
// from a fresh softmax state and is folded into the running total at its end, in registers in
// whole-row mode or in the combine kernel in split mode, with identical operations.
//
// The generated prologue defines namespace smla::cfg (see codegen/decode_source.cpp).
#pragma once

#include "decode_geometry.cuh"
#include "decode_params.cuh"
#include "segment_fold.cuh"
#include "smla_device.cuh"

namespace smla {
namespace decode {

using namespace cfg;

constexpr DecodeShape kShape = {kHeadsPerCta, kWarps,      kTileEntries, kStages, kSegmentTiles,
                                kLayout,      kNumSources, kWidth0,      kWidth1};
constexpr DecodeGeometry kGeo = decode_geometry(kShape);

constexpr bool kPacked = kLayout == kLayoutPacked;
constexpr bool kBf16Kv = kLayout == kLayoutBf16;
constexpr int kConsumers = kWarps * 32;
constexpr int kDimsPerWarp = kHeadDim / kWarps;
constexpr int kGroupsPerWarp = kDimsPerWarp / 64;
constexpr int kKSteps = kDimsPerWarp / 16;
constexpr int kMTiles = kHeadsPerCta / 16;
constexpr int kNTiles = kTileEntries / 8;
constexpr int kPvKSteps = kTileEntries / 16;
constexpr int kPvNTiles = kDimsPerWarp / 8;
constexpr int kHeadGroups = (kNumHeads + kHeadsPerCta - 1) / kHeadsPerCta;
constexpr int kLanesPerHead = kConsumers / kHeadsPerCta;
constexpr int kEntriesPerLane = kTileEntries / kLanesPerHead;
// Registers per thread so that kMinBlocksPerSm CTAs fit: each of the 4 schedulers has a
// quarter of the register file for the warps it holds.
constexpr int kWarpsPerScheduler = (kWarps * kMinBlocksPerSm + 3) / 4;
constexpr int kMaxRegisters = 16384 / (32 * kWarpsPerScheduler) / 8 * 8 > 255
                                  ? 255
                                  : 16384 / (32 * kWarpsPerScheduler) / 8 * 8;

static_assert(kHeadsPerCta % 16 == 0 && kMTiles >= 1, "heads per CTA: a multiple of 16");
static_assert(kDimsPerWarp % 64 == 0, "each warp owns whole 64-dim groups");
static_assert(kTileEntries % 16 == 0 && kTileEntries <= 64, "tile entries: 16, 32, 48 or 64");
static_assert(kLanesPerHead <= 32 && 32 % kLanesPerHead == 0, "softmax lanes per head");
static_assert(kEntriesPerLane % 2 == 0 && kTileEntries % kLanesPerHead == 0, "softmax split");
static_assert(kGeo.smem_bytes <= 227 * 1024, "shared memory per block");
static_assert(kQLen >= 1 && kQLen <= 8, "rows of one request; each row has its own lists");

// Where the lengths end and which tiles hold anything: both roles walk the same tile list.
struct RowTiles {
  int length0;
  int length1;
  SMLA_DEVICE bool nonempty(int tile) const {
    if (tile < kGeo.tiles0) return tile * kTileEntries < length0;
    return (tile - kGeo.tiles0) * kTileEntries < length1;
  }
  // The first nonempty tile at or after `tile`, or `end`.
  SMLA_DEVICE int next(int tile, int end) const {
    while (tile < end && !nonempty(tile)) ++tile;
    return tile;
  }
};

SMLA_DEVICE int clamp_length(const int* lengths, int row, int width) {
  if (lengths == nullptr) return width;
  const int length = lengths[row];
  return length < 0 ? 0 : (length > width ? width : length);
}

struct Shared {
  unsigned char* base;
  SMLA_DEVICE unsigned char* raw(int stage) const {
    return base + kGeo.raw_offset + stage * kTileEntries * kGeo.entry_bytes;
  }
  SMLA_DEVICE unsigned char* scales(int stage) const {
    return base + kGeo.scale_offset + stage * kTileEntries * 8;
  }
  SMLA_DEVICE float* scores() const { return (float*)(base + kGeo.score_offset); }
  SMLA_DEVICE u16* probs() const { return (u16*)(base + kGeo.prob_offset); }
  // Per head: [0] rescale of this tile, [1] fold mode, [2] total factor, [3] segment factor,
  // [4] output factor.
  SMLA_DEVICE float* head(int h) const { return (float*)(base + kGeo.head_offset) + h * 5; }
  // 1 where entry e of the stage's tile is valid.
  SMLA_DEVICE u8* valid(int stage) const { return base + kGeo.valid_offset + stage * kTileEntries; }
  // The bf16 value tile: entry e's 16-byte chunk k at chunk k ^ (e & 7), so that the eight rows
  // of every ldmatrix land in different banks.
  SMLA_DEVICE unsigned char* value_tile(int stage) const {
    return kBf16Kv ? raw(stage) : base + kGeo.value_offset;
  }
};

SMLA_DEVICE int swizzled_chunk(int entry, int chunk) { return chunk ^ (entry & 7); }

// ---- gathering ----------------------------------------------------------------------------------

// Byte offsets (inside the source's cache) of an entry's data and packed scales; -1: invalid.
struct EntryAddress {
  i64 data;
  i64 scale;
};

template <int kPageSize>
SMLA_DEVICE EntryAddress entry_address(const SourceParams& src, int index) {
  if (index < 0 || (i64)index >= src.index_limit) return {-1, -1};
  const i64 page = index / kPageSize;
  const i64 slot = index % kPageSize;
  const i64 page_base = page * src.page_stride_bytes;
  if (kPacked) return {page_base + slot * 576, page_base + (i64)kPageSize * 576 + slot * 8};
  return {page_base + slot * (kBf16Kv ? 1024 : 512), -1};
}

// Each warp gathers kEntriesPerWarp entries of every tile: lane i < kEntriesPerWarp loads the
// index of entry warp * kEntriesPerWarp + i, and kLanesPerEntry lanes copy each entry, chunk
// (lane % kLanesPerEntry) + kLanesPerEntry * j, so a lane's copies differ by constant offsets.
constexpr int kEntriesPerWarp = kTileEntries / kWarps;
constexpr int kLanesPerEntry = 32 / kEntriesPerWarp;
constexpr int kCopiesPerLane = (kGeo.chunks_per_entry + kLanesPerEntry - 1) / kLanesPerEntry;
static_assert(kEntriesPerWarp >= 1 && kEntriesPerWarp <= 32 && 32 % kEntriesPerWarp == 0,
              "entries gathered per warp: a power of two up to 32");

// The index of this lane's entry of `tile` (or -1 beyond the length); loaded one iteration
// before the copies that need it, so its latency hides behind a tile of work.
SMLA_DEVICE int load_entry_index(const DecodeParams& p, const RowTiles& rows, int row, int tile, int lane) {
  const bool second = tile >= kGeo.tiles0;
  const SourceParams& src = p.sources[second ? 1 : 0];
  const int length = second ? rows.length1 : rows.length0;
  const int column = (second ? tile - kGeo.tiles0 : tile) * kTileEntries +
                     (threadIdx.x / 32) * kEntriesPerWarp + lane;
  if (lane >= kEntriesPerWarp || column >= length) return -1;
  return __ldg(src.indices + (i64)row * src.index_row_stride + column);
}

// Issues this warp's copies of `tile` into `stage` (zero-filled where the entry is invalid, so
// nothing unselected is read) and records each entry's validity.
SMLA_DEVICE void gather_tile(const DecodeParams& p, const Shared& sh, int tile, int stage, int index, int lane) {
  const bool second = tile >= kGeo.tiles0;
  const SourceParams& src = p.sources[second ? 1 : 0];
  const EntryAddress address =
      second ? entry_address<kPageSize1>(src, index) : entry_address<kPageSize0>(src, index);
  const int first_entry = (threadIdx.x / 32) * kEntriesPerWarp;
  const unsigned char* cache = src.cache;
  const int local = lane / kLanesPerEntry;
  const int entry = first_entry + local;
  const int first_chunk = lane % kLanesPerEntry;
  const i64 data = __shfl_sync(0xffffffffu, address.data, local);
  const bool valid = data >= 0;
  // With nothing to read (src_bytes 0) the source only has to be some address of the cache.
  const unsigned char* from = cache + (valid ? data : 0) + first_chunk * 16;
  const u32 to = smem_u32(sh.raw(stage)) + entry * kGeo.entry_bytes;
#pragma unroll
  for (int j = 0; j < kCopiesPerLane; ++j) {
    const int chunk = first_chunk + kLanesPerEntry * j;
    if (chunk < kGeo.chunks_per_entry) {
      const int stored_chunk = kBf16Kv ? swizzled_chunk(entry, chunk) : chunk;
      cp_async_16(to + stored_chunk * 16, from + kLanesPerEntry * 16 * j, valid ? 16u : 0u);
    }
  }
  if (lane < kEntriesPerWarp) {
    const int own_entry = first_entry + lane;
    if (kPacked) {
      const bool own_valid = address.scale >= 0;
      cp_async_8(smem_u32(sh.scales(stage) + own_entry * 8), cache + (own_valid ? address.scale : 0),
                 own_valid ? 8u : 0u);
    }
    sh.valid(stage)[own_entry] = address.data >= 0 ? 1 : 0;
  }
}

// ---- consumers ----------------------------------------------------------------------------------

// The first of the 4 dims a lane (column c) feeds to k-step i of 64-dim group `group`; see the
// file comment. Packed rope dims (group 7) come as two 8-dim bf16 chunks per lane.
SMLA_DEVICE int query_dim(int group, int c, int i) {
  if (kPacked && group == 7) return (i < 2 ? 448 + 8 * c : 480 + 8 * c) + 4 * (i & 1);
  return 64 * group + 16 * c + 4 * i;
}

// Heads past kNumHeads fill the CTA's last M tile: they repeat the last real head and their
// results are never stored. NOTE: real values rather than zeros, because ptxas spent registers
// on fragments it knew to be zero and spilled at the 128-register budget.
SMLA_DEVICE int loaded_head(int head) { return head < kNumHeads ? head : kNumHeads - 1; }

// Loads 4 query values (dims d..d+3 of one head) as two bf16x2 words.
SMLA_DEVICE void load_query4(const DecodeParams& p, int row, int head, int d, u32& low, u32& high) {
  head = loaded_head(head);
  const i64 offset = (i64)row * p.q_row_stride + (i64)head * p.q_head_stride + d;
  if (kQFp8) {
    const u32 x = *(const u32*)((const u8*)p.q + offset);
    dequant_e4m3x4(x, bf16x2_pow2_multiplier(127), low, high);
  } else {
    const uint2 x = *(const uint2*)((const u16*)p.q + offset);
    low = x.x;
    high = x.y;
  }
}
// Loads 2 query values (dims d, d+1) as one bf16x2 word.
SMLA_DEVICE u32 load_query2(const DecodeParams& p, int row, int head, int d) {
  head = loaded_head(head);
  const i64 offset = (i64)row * p.q_row_stride + (i64)head * p.q_head_stride + d;
  if (kQFp8) {
    const u32 x = *(const u16*)((const u8*)p.q + offset);
    return mul_bf16x2(e4m3x2_to_bf16x2_scaled(x, kBytes01), bf16x2_pow2_multiplier(127));
  }
  return *(const u32*)((const u16*)p.q + offset);
}

// The folded total of whole-row mode, in registers or in shared memory (kGeo.total_in_smem);
// each thread owns its elements, stored thread-minor so the accesses are conflict-free. A row
// of one segment needs none: its total is its only segment (a fold that replaces).
constexpr bool kFolds = kGeo.segments > 1;
struct FoldedTotal {
  static constexpr bool kInRegisters = kFolds && !kGeo.total_in_smem;
  float registers[kInRegisters ? kMTiles : 1][kInRegisters ? kPvNTiles : 1][4];
  float* smem;
  SMLA_DEVICE float& at(int mt, int nt, int i) {
    if (!kInRegisters) return smem[((mt * kPvNTiles + nt) * 4 + i) * kConsumers];
    return registers[kInRegisters ? mt : 0][kInRegisters ? nt : 0][i];
  }
  SMLA_DEVICE float at(int mt, int nt, int i) const { return const_cast<FoldedTotal*>(this)->at(mt, nt, i); }
};

struct Consumer {
  int warp, lane, g, c;  // g: fragment row group, c: fragment column pair
  u32 q[kMTiles][kKSteps][4];
  float o[kMTiles][kPvNTiles][4];
  FoldedTotal total;

  SMLA_DEVICE void load_query(const DecodeParams& p, int row, int head_group) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      const int head0 = head_group * kHeadsPerCta + 16 * mt + g;
#pragma unroll
      for (int kk = 0; kk < kKSteps; ++kk) {
        u32(&a)[4] = q[mt][kk];
        if (kBf16Kv) {
          const int d = warp * kDimsPerWarp + 16 * kk + 2 * c;
          a[0] = load_query2(p, row, head0, d);
          a[1] = load_query2(p, row, head0 + 8, d);
          a[2] = load_query2(p, row, head0, d + 8);
          a[3] = load_query2(p, row, head0 + 8, d + 8);
        } else {
          const int d = query_dim(warp * kGroupsPerWarp + kk / 4, c, kk % 4);
          load_query4(p, row, head0, d, a[0], a[2]);
          load_query4(p, row, head0 + 8, d, a[1], a[3]);
        }
      }
    }
  }

  // Dequantizes this lane's 16 dims of entry `e` in 64-dim group `group` into the B fragments
  // of four k-steps, and stores them into the value tile for the value product.
  // Dequantizes this lane's 16 dims of entry `e` in 64-dim group `group` into the B fragments
  // of four k-steps, and stores them into the value tile for the value product. kRope: the
  // group holds the packed layout's bf16 rope dims, used as they are.
  template <bool kRope>
  SMLA_DEVICE void dequant_group(const Shared& sh, int stage, int e, int group, u32 (&b)[8]) {
    const unsigned char* entry = sh.raw(stage) + e * kGeo.entry_bytes;
    unsigned char* values = sh.value_tile(stage) + e * 1024;
    if (kRope) {
      const uint4 x = *(const uint4*)(entry + 448 + 16 * c);
      const uint4 y = *(const uint4*)(entry + 512 + 16 * c);
      b[0] = x.x, b[1] = x.y, b[2] = x.z, b[3] = x.w;
      b[4] = y.x, b[5] = y.y, b[6] = y.z, b[7] = y.w;
      *(uint4*)(values + 16 * swizzled_chunk(e, 56 + c)) = x;
      *(uint4*)(values + 16 * swizzled_chunk(e, 60 + c)) = y;
      return;
    }
    const uint4 x = *(const uint4*)(entry + 64 * group + 16 * c);
    const u32 exponent = kPacked ? sh.scales(stage)[e * 8 + group] : 127u;
    // The fast multiplier covers every scale a real cache has; the vote keeps the rare fp32
    // path from costing a divergent branch on every group.
    if (!kPacked || !__any_sync(0xffffffffu, exponent > kMaxFastScaleExponent)) {
      const u32 multiplier = bf16x2_pow2_multiplier(exponent);
      dequant_e4m3x4(x.x, multiplier, b[0], b[1]);
      dequant_e4m3x4(x.y, multiplier, b[2], b[3]);
      dequant_e4m3x4(x.z, multiplier, b[4], b[5]);
      dequant_e4m3x4(x.w, multiplier, b[6], b[7]);
    } else {
      dequant_e4m3x4_slow(x.x, exponent, b[0], b[1]);
      dequant_e4m3x4_slow(x.y, exponent, b[2], b[3]);
      dequant_e4m3x4_slow(x.z, exponent, b[4], b[5]);
      dequant_e4m3x4_slow(x.w, exponent, b[6], b[7]);
    }
    *(uint4*)(values + 16 * swizzled_chunk(e, 8 * group + 2 * c)) = make_uint4(b[0], b[1], b[2], b[3]);
    *(uint4*)(values + 16 * swizzled_chunk(e, 8 * group + 2 * c + 1)) =
        make_uint4(b[4], b[5], b[6], b[7]);
  }

  // Partial scores of all heads against the tile's entries over this warp's dims.
  SMLA_DEVICE void scores(const Shared& sh, int stage, float (&s)[kMTiles][kNTiles][4]) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt) s[mt][nt][0] = s[mt][nt][1] = s[mt][nt][2] = s[mt][nt][3] = 0.0f;
    if (kBf16Kv) {
      const u32 raw = smem_u32(sh.raw(stage));
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt) {
        const int e = 8 * nt + (lane & 7);
#pragma unroll
        for (int kk = 0; kk < kKSteps; kk += 2) {
          const int chunk = (warp * kDimsPerWarp + 16 * kk) / 8 + (lane >> 3);
          u32 b0, b1, b2, b3;
          ldmatrix_x4(raw + e * 1024 + 16 * swizzled_chunk(e, chunk), b0, b1, b2, b3);
#pragma unroll
          for (int mt = 0; mt < kMTiles; ++mt) {
            mma_bf16(s[mt][nt], q[mt][kk], b0, b1);
            mma_bf16(s[mt][nt], q[mt][kk + 1], b2, b3);
          }
        }
      }
      return;
    }
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt) {
      const int e = 8 * nt + g;
#pragma unroll
      for (int gi = 0; gi < kGroupsPerWarp; ++gi) {
        u32 b[8];
        const int group = warp * kGroupsPerWarp + gi;
        // NOTE: a per-warp template instantiation of this loop (to drop the rope test) cost
        // ptxas registers it spilled at the 128 budget; the uniform branch is cheaper.
        if (kPacked && group == 7) {
          dequant_group<true>(sh, stage, e, group, b);
        } else {
          dequant_group<false>(sh, stage, e, group, b);
        }
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int mt = 0; mt < kMTiles; ++mt) mma_bf16(s[mt][nt], q[mt][4 * gi + i], b[2 * i], b[2 * i + 1]);
      }
    }
  }

  SMLA_DEVICE void store_scores(const Shared& sh, const float (&s)[kMTiles][kNTiles][4]) {
    float* out = sh.scores() + warp * kHeadsPerCta * kGeo.score_stride;
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt) {
        const int h = 16 * mt + g;
        const int e = 8 * nt + 2 * c;
        *(float2*)(out + h * kGeo.score_stride + e) = make_float2(s[mt][nt][0], s[mt][nt][1]);
        *(float2*)(out + (h + 8) * kGeo.score_stride + e) = make_float2(s[mt][nt][2], s[mt][nt][3]);
      }
  }

  // out = rescale * out + P V over this warp's dims.
  SMLA_DEVICE void accumulate_values(const Shared& sh, int stage) {
    // NOTE: skipping the rescale when every factor is 1 (exact) made ptxas spill at 128
    // registers; the multiplies are cheaper than the spills.
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      const float top = sh.head(16 * mt + g)[0];
      const float bottom = sh.head(16 * mt + g + 8)[0];
#pragma unroll
      for (int nt = 0; nt < kPvNTiles; ++nt) {
        o[mt][nt][0] *= top;
        o[mt][nt][1] *= top;
        o[mt][nt][2] *= bottom;
        o[mt][nt][3] *= bottom;
      }
    }
    const u32 probs = smem_u32(sh.probs());
    const u32 values = smem_u32(sh.value_tile(stage));
#pragma unroll
    for (int kk = 0; kk < kPvKSteps; ++kk) {
      u32 a[kMTiles][4];
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        const int row = 16 * mt + (lane & 15);
        const int column = 16 * kk + 8 * (lane >> 4);
        ldmatrix_x4(probs + 2 * (row * kGeo.prob_stride + column), a[mt][0], a[mt][1], a[mt][2], a[mt][3]);
      }
      const int e = 16 * kk + ((lane >> 3) & 1) * 8 + (lane & 7);
#pragma unroll
      for (int np = 0; np < kPvNTiles / 2; ++np) {
        const int chunk = (warp * kDimsPerWarp) / 8 + 2 * np + (lane >> 4);
        u32 b0, b1, b2, b3;
        ldmatrix_x4_trans(values + e * 1024 + 16 * swizzled_chunk(e, chunk), b0, b1, b2, b3);
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
          mma_bf16(o[mt][2 * np], a[mt], b0, b1);
          mma_bf16(o[mt][2 * np + 1], a[mt], b2, b3);
        }
      }
    }
  }

  // Folds this segment's values into the total (whole-row mode) and clears them.
  SMLA_DEVICE void fold_segment(const Shared& sh) {
    if (!kFolds) return;
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      const float* top = sh.head(16 * mt + g);
      const float* bottom = sh.head(16 * mt + g + 8);
      const FoldStep st = {(int)top[1], top[2], top[3]};
      const FoldStep sb = {(int)bottom[1], bottom[2], bottom[3]};
#pragma unroll
      for (int nt = 0; nt < kPvNTiles; ++nt) {
        total.at(mt, nt, 0) = fold_value(total.at(mt, nt, 0), o[mt][nt][0], st);
        total.at(mt, nt, 1) = fold_value(total.at(mt, nt, 1), o[mt][nt][1], st);
        total.at(mt, nt, 2) = fold_value(total.at(mt, nt, 2), o[mt][nt][2], sb);
        total.at(mt, nt, 3) = fold_value(total.at(mt, nt, 3), o[mt][nt][3], sb);
        o[mt][nt][0] = o[mt][nt][1] = o[mt][nt][2] = o[mt][nt][3] = 0.0f;
      }
    }
  }
};

// The softmax of one tile for one head, by the kLanesPerHead lanes that own it. Keeps the
// segment's running (max, sum) and, in whole-row mode, the folded total's.
struct HeadSoftmax {
  // Recomputed from the thread index where used: cheaper than holding two registers.
  SMLA_DEVICE static int head() { return threadIdx.x / kLanesPerHead; }          // within the CTA
  SMLA_DEVICE static int first() { return (threadIdx.x % kLanesPerHead) * kEntriesPerLane; }
  float max = neg_inf(), sum = 0.0f;            // segment state (log2 units)
  float total_max = neg_inf(), total_sum = 0.0f;  // folded state (whole-row mode)

  SMLA_DEVICE void tile(const DecodeParams& p, const Shared& sh, int stage) {
    const u8* valid = sh.valid(stage);
    float s[kEntriesPerLane];
#pragma unroll
    for (int j = 0; j < kEntriesPerLane; ++j) s[j] = 0.0f;
    // The warps' partial scores, summed in warp order, two entries per 8-byte load.
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const float* partial = sh.scores() + (w * kHeadsPerCta + head()) * kGeo.score_stride + first();
#pragma unroll
      for (int j = 0; j < kEntriesPerLane; j += 2) {
        const float2 v = *(const float2*)(partial + j);
        s[j] += v.x;
        s[j + 1] += v.y;
      }
    }
    float tile_max = neg_inf();
#pragma unroll
    for (int j = 0; j < kEntriesPerLane; ++j) {
      s[j] = valid[first() + j] ? s[j] * p.score_scale_log2 : neg_inf();
      tile_max = fmaxf(tile_max, s[j]);
    }
#pragma unroll
    for (int offset = kLanesPerHead / 2; offset > 0; offset /= 2)
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, offset));
    const float new_max = fmaxf(max, tile_max);
    const float rescale = max == neg_inf() ? 0.0f : exp2_approx(max - new_max);
    float row_sum = 0.0f;
    u16* probs = sh.probs() + head() * kGeo.prob_stride + first();
#pragma unroll
    for (int j = 0; j < kEntriesPerLane; j += 2) {
      const float p0 = s[j] == neg_inf() ? 0.0f : exp2_approx(s[j] - new_max);
      const float p1 = s[j + 1] == neg_inf() ? 0.0f : exp2_approx(s[j + 1] - new_max);
      // The sum uses the rounded probabilities the value product multiplies with.
      const u32 pair = pack_bf16x2(p0, p1);
      row_sum += bf16_low(pair) + bf16_high(pair);
      *(u32*)(probs + j) = pair;
    }
#pragma unroll
    for (int offset = kLanesPerHead / 2; offset > 0; offset /= 2)
      row_sum += __shfl_xor_sync(0xffffffffu, row_sum, offset);
    sum = __fadd_rn(__fmul_rn(sum, rescale), row_sum);
    max = new_max;
    if ((threadIdx.x % kLanesPerHead) == 0) sh.head(head())[0] = rescale;
  }

  // At a segment's end (whole-row mode): fold (max, sum) into the total, publish the step.
  SMLA_DEVICE void end_segment(const Shared& sh) {
    const FoldStep step = fold_state(total_max, total_sum, max, sum);
    if ((threadIdx.x % kLanesPerHead) == 0) {
      float* h = sh.head(head());
      h[1] = (float)step.mode;
      h[2] = step.total_factor;
      h[3] = step.segment_factor;
    }
    max = neg_inf();
    sum = 0.0f;
  }
};

SMLA_DEVICE void store_output(const DecodeParams& p, const Shared& sh, const Consumer& cs, int row,
                              int head_group) {
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int h = 16 * mt + cs.g + 8 * half;
      const int head = head_group * kHeadsPerCta + h;
      if (head >= kNumHeads) continue;
      const float factor = sh.head(h)[4];
      u16* out = (u16*)p.out + (i64)row * p.out_row_stride + (i64)head * p.out_head_stride;
#pragma unroll
      for (int nt = 0; nt < kPvNTiles; ++nt) {
        const int d = cs.warp * kDimsPerWarp + 8 * nt + 2 * cs.c;
        const float v0 = kFolds ? cs.total.at(mt, nt, 2 * half) : cs.o[mt][nt][2 * half];
        const float v1 = kFolds ? cs.total.at(mt, nt, 2 * half + 1) : cs.o[mt][nt][2 * half + 1];
        *(u32*)(out + d) = pack_bf16x2(__fmul_rn(v0, factor), __fmul_rn(v1, factor));
      }
    }
}

SMLA_DEVICE void store_partial(const DecodeParams& p, const Consumer& cs, i64 item) {
  float* out = p.partial_out + item * kHeadsPerCta * kHeadDim;
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int nt = 0; nt < kPvNTiles; ++nt) {
      const int h = 16 * mt + cs.g;
      const int d = cs.warp * kDimsPerWarp + 8 * nt + 2 * cs.c;
      *(float2*)(out + h * kHeadDim + d) = make_float2(cs.o[mt][nt][0], cs.o[mt][nt][1]);
      *(float2*)(out + (h + 8) * kHeadDim + d) = make_float2(cs.o[mt][nt][2], cs.o[mt][nt][3]);
    }
}

SMLA_DEVICE float sink_log2(const DecodeParams& p, int head) {
  if (!kHasSink || head >= kNumHeads) return neg_inf();
  return __fmul_rn(p.sink[head], kLog2e);
}

SMLA_DEVICE void run_cta(const DecodeParams& p, const Shared& sh, const RowTiles& rows, int row,
                               int head_group, int begin, int end, i64 item) {
  Consumer cs;
  cs.warp = threadIdx.x / 32;
  cs.lane = threadIdx.x & 31;
  cs.g = cs.lane >> 2;
  cs.c = cs.lane & 3;
  cs.total.smem = (float*)(sh.base + kGeo.total_offset) + threadIdx.x;
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int nt = 0; nt < kPvNTiles; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        cs.o[mt][nt][i] = 0.0f;
        if (kFolds) cs.total.at(mt, nt, i) = 0.0f;
      }
  cs.load_query(p, row, head_group);
  HeadSoftmax sm;
  const bool owner = (threadIdx.x % kLanesPerHead) == 0;

  // Pipeline: tile k lives in stage k % kStages; the tiles kStages - 1 ahead are in flight.
  // The first ones' indices are loaded together, so the start pays one index latency.
  int ahead_tile[kStages - 1];
  int ahead_index[kStages - 1];
  int fetch = rows.next(begin, end);
#pragma unroll
  for (int j = 0; j < kStages - 1; ++j) {
    ahead_tile[j] = fetch;
    ahead_index[j] = fetch < end ? load_entry_index(p, rows, row, fetch, cs.lane) : -1;
    fetch = fetch < end ? rows.next(fetch + 1, end) : end;
  }
#pragma unroll
  for (int j = 0; j < kStages - 1; ++j) {
    if (ahead_tile[j] < end) gather_tile(p, sh, ahead_tile[j], j, ahead_index[j], cs.lane);
    cp_async_commit();
  }
  int fetch_index = fetch < end ? load_entry_index(p, rows, row, fetch, cs.lane) : -1;

  int tile = rows.next(begin, end);
  for (int k = 0; tile < end; ++k) {
    const int stage = k % kStages;
    const int next = rows.next(tile + 1, end);
    cp_async_wait<kStages - 2>();
    // Tile k has landed for every thread, and every warp is done with tile k - 1.
    __syncthreads();
    if (fetch < end) {
      gather_tile(p, sh, fetch, (k + kStages - 1) % kStages, fetch_index, cs.lane);
      fetch = rows.next(fetch + 1, end);
      fetch_index = fetch < end ? load_entry_index(p, rows, row, fetch, cs.lane) : -1;
    }
    cp_async_commit();
    float s[kMTiles][kNTiles][4];
    cs.scores(sh, stage, s);
    cs.store_scores(sh, s);
    __syncthreads();
    sm.tile(p, sh, stage);
    const bool segment_ends = next >= end || next / kSegmentTiles != tile / kSegmentTiles;
    if (segment_ends && !p.split) sm.end_segment(sh);
    __syncthreads();
    cs.accumulate_values(sh, stage);
    if (segment_ends && !p.split) cs.fold_segment(sh);
    tile = next;
  }

  const int head = head_group * kHeadsPerCta + sm.head();
  if (p.split) {
    if (owner) {
      float* ml = p.partial_ml + (item * kHeadsPerCta + sm.head()) * 2;
      ml[0] = sm.max;
      ml[1] = sm.sum;
    }
    // A segment with no nonempty tile leaves its values unwritten: its max is -inf, and the
    // combine kernel never reads them.
    if (rows.next(begin, end) < end) store_partial(p, cs, item);
    return;
  }
  if (owner) {
    sh.head(sm.head())[4] = output_factor(sm.total_max, sm.total_sum, sink_log2(p, head), p.out_scale);
    if (kWantLse && head < kNumHeads) p.lse[(i64)row * kNumHeads + head] = row_lse(sm.total_max, sm.total_sum);
  }
  __syncthreads();
  store_output(p, sh, cs, row, head_group);
}

}  // namespace decode
}  // namespace smla

extern "C" __global__ void __maxnreg__(smla::decode::kMaxRegisters) smla_decode(const __grid_constant__ smla::DecodeParams p) {
  using namespace smla;
  using namespace smla::decode;
  extern __shared__ __align__(16) unsigned char smem[];
  const Shared sh{smem};
  // Work item: head group fastest, so the CTAs that read the same entries run side by side.
  const i64 item = blockIdx.x;
  const int head_group = (int)(item % kHeadGroups);
  const i64 rest = item / kHeadGroups;
  const int segment = p.split ? (int)(rest % kGeo.segments) : 0;
  const int row = p.split ? (int)(rest / kGeo.segments) : (int)rest;
  const int begin = p.split ? segment * kSegmentTiles : 0;
  const int end = p.split ? min(begin + kSegmentTiles, kGeo.tiles) : kGeo.tiles;

  RowTiles rows;
  rows.length0 = clamp_length(p.sources[0].lengths, row, kWidth0);
  rows.length1 = kNumSources > 1 ? clamp_length(p.sources[1].lengths, row, kWidth1) : 0;

  run_cta(p, sh, rows, row, head_group, begin, end, item);
}
