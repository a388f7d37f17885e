// The decode kernel family: sparse MQA over a 512-dim latent for one row per CTA (or one row
// segment per CTA in split mode), heads_per_cta (8, 16 or 32) heads at a time, from paged KV
// caches. Design and measurements: docs/decode-kernel.md.
//
// Work decomposition. A tile holds kTileEntries entries (16 per entry block). 4 threads per
// entry gather each tile into a ring of shared-memory stages with cp.async (16-byte chunks,
// zero-filled for invalid entries, so nothing unselected is read), kStages - 1 tiles ahead;
// the indices are loaded one tile earlier still.
// Scores: entries are the M of the MMA and heads its N (S^T = K Q^T), so 8 heads cost 8. The
// kDimParts warps of an entry block each take 512 / kDimParts of the dims: a warp converts its
// slice of its 16 entries to bf16 once, into the value tile, and multiplies it by the bf16
// query tile, both as ldmatrix fragments. The parts' partial scores meet in shared memory,
// where each thread sums the values it owns (in part order, so the result does not depend on
// timing).
// Softmax: a thread owns kOwned (entry, head) scores and exponentiates them against the
// segment's lazy reference (run_cta). Values: every warp accumulates O^T = V^T P^T for its
// kPvDims dims (dims are the M, heads the N), with ldmatrix.trans fragments of the value tile
// and ldmatrix fragments of P.
//
// Segments. The row's tiles are cut into fixed segments (segment_fold.cuh): a segment starts
// from a fresh softmax state and is folded into the running total at its end, in registers in
// whole-row mode or in the combine kernel in split mode, with identical operations.
//
// The generated prologue defines namespace smla::cfg (see codegen/kernel_source.cpp).
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
constexpr ScoreOwnership kOwn = score_ownership(kShape);

constexpr bool kPacked = kLayout == kLayoutPacked;
constexpr bool kBf16Kv = kLayout == kLayoutBf16;
constexpr int kThreads = kWarps * 32;
constexpr int kEntryBlocks = kTileEntries / 16;
constexpr int kDimParts = kWarps / kEntryBlocks;  // warps that share an entry block
constexpr int kGroupsPerWarp = 8 / kDimParts;     // 64-dim groups of a warp's scores
constexpr int kNTiles = kHeadsPerCta / 8;
constexpr int kCombos = 2 * kNTiles;         // (n tile, head pair) columns of a thread
constexpr int kValues = 4 * kNTiles;         // score values of a thread: 2 rows x kCombos
constexpr int kOwned = kValues / kDimParts;  // of which it sums and exponentiates
constexpr int kPvDims = kHeadDim / kWarps;   // output dims a warp accumulates
constexpr int kPvMTiles = kPvDims / 16;
constexpr int kPvKSteps = kTileEntries / 16;
constexpr int kHeadGroups = (kNumHeads + kHeadsPerCta - 1) / kHeadsPerCta;
// NOTE: 4 threads copy an entry (9 chunks each for the packed layout): fewer threads than the
// CTA's share the per-entry address arithmetic, and the other warps skip gathering.
constexpr int kThreadsPerEntry = 4;
constexpr int kGatherThreads = kThreadsPerEntry * kTileEntries;
constexpr int kCopiesPerThread = (kGeo.chunks_per_entry + kThreadsPerEntry - 1) / kThreadsPerEntry;
// Registers per thread so that kMinBlocksPerSm CTAs fit: each of the 4 schedulers has a
// quarter of the register file for the warps it holds.
constexpr int kWarpsPerScheduler = (kWarps * kMinBlocksPerSm + 3) / 4;
constexpr int kMaxRegisters = 16384 / (32 * kWarpsPerScheduler) / 8 * 8 > 255
                                  ? 255
                                  : 16384 / (32 * kWarpsPerScheduler) / 8 * 8;

static_assert(kTileEntries == 32 || kTileEntries == 64, "tile entries: 32 or 64");
static_assert(kHeadsPerCta == 8 || kHeadsPerCta == 16 || kHeadsPerCta == 32, "heads per CTA");
static_assert(kDimParts == 2 || kDimParts == 4, "2 or 4 warps per entry block");
static_assert(kWarps == kDimParts * kEntryBlocks, "whole entry blocks");
static_assert(kOwned >= 1 && kValues % kDimParts == 0, "every score value has one owner");
static_assert(kPvDims % 16 == 0 && kTileEntries % 16 == 0, "whole MMA tiles");
static_assert(kGatherThreads <= kThreads && kGatherThreads % 32 == 0, "whole gathering warps");
static_assert(kGeo.smem_bytes <= 227 * 1024, "shared memory per block");
static_assert(kQLen >= 1 && kQLen <= 8, "rows of one request; each row has its own lists");

// The nonempty tiles of a row inside [begin, end), in order: source 0's tiles up to its length,
// then source 1's. Gathering and computing walk the same list.
struct TileWalk {
  int first;         // the first tile (meaningless when count is 0)
  int first_end;     // source 0's nonempty tiles end here...
  int second_begin;  // ...and source 1's begin here
  int count;
  SMLA_DEVICE int next(int tile) const { return tile + 1 == first_end ? second_begin : tile + 1; }
};

SMLA_DEVICE int clamp_length(const int* lengths, int row, int width) {
  if (lengths == nullptr) return width;
  const int length = lengths[row];
  return length < 0 ? 0 : (length > width ? width : length);
}

SMLA_DEVICE TileWalk make_walk(int length0, int length1, int begin, int end) {
  const int first_count = max(0, min(end, ceil_div(length0, kTileEntries)) - begin);
  const int second_begin = max(begin, kGeo.tiles0);
  const int second_count =
      max(0, min(end, kGeo.tiles0 + ceil_div(length1, kTileEntries)) - second_begin);
  TileWalk walk;
  walk.first = first_count > 0 ? begin : second_begin;
  walk.first_end = begin + first_count;
  walk.second_begin = second_begin;
  walk.count = first_count + second_count;
  return walk;
}

SMLA_DEVICE int swizzled_chunk(int entry, int chunk) { return chunk ^ (entry & 7); }

// ---- per-thread offsets ------------------------------------------------------------------------

// The shared-memory byte offsets a thread uses every tile, computed once (relative to stage 0
// where a stage applies), so the tile loop adds constants instead of recomputing them.
struct Lanes {
  int warp, lane, g, c;      // g: fragment row group, c: fragment column pair
  int block, part;           // entry block (16 entries) and part of the dims of the scores
  u32 raw;                   // dequant: entry g's first 16 raw bytes of this part's first group
  u32 rope;                  // dequant: entry g's bf16 rope dims (packed layout)
  u32 scale;                 // dequant: entry g's scale byte of this part's first group
  u32 value;                 // dequant: entry g's first value chunk of this part's first group
  u32 value_pair;            // dequant: and the chunk after it (swizzled apart)
  u32 score_a;               // bf16 scores: this lane's ldmatrix row of the stage, unswizzled
  u32 score_swizzle;         // scores: 16 * (the lane's chunk ^ row) for k-step 0
  u32 score_b;               // scores: this lane's ldmatrix row of the query tile (k-step 0)
  u32 pv_probs;              // values: this lane's ldmatrix row of P (k-step 0)
  u32 pv_values[kPvMTiles];  // values: this lane's ldmatrix.trans row of V (k-step 0)

  SMLA_DEVICE int score_entry(int r) const { return 16 * block + g + 8 * r; }
  // Owned value k: v = part + kDimParts * k of the thread's kValues, v = r * kCombos + combo.
  SMLA_DEVICE int owned_combo(int k) const { return (part + kDimParts * k) % kCombos; }
  SMLA_DEVICE int owned_row(int k) const { return (part + kDimParts * k) / kCombos; }
  // The head of column combo (n tile combo / 2, head combo % 2 of the thread's pair).
  SMLA_DEVICE int head(int combo) const { return 8 * (combo >> 1) + 2 * c + (combo & 1); }
};

SMLA_DEVICE Lanes make_lanes() {
  Lanes t;
  t.warp = threadIdx.x / 32;
  t.lane = threadIdx.x & 31;
  t.g = t.lane >> 2;
  t.c = t.lane & 3;
  t.block = t.warp % kEntryBlocks;
  t.part = t.warp / kEntryBlocks;
  const int entry = 16 * t.block + t.g;
  const int group = t.part * kGroupsPerWarp;
  t.raw = kGeo.raw_offset + entry * kGeo.entry_bytes + 64 * group + 16 * t.c;
  t.rope = kGeo.raw_offset + entry * kGeo.entry_bytes + 448 + 32 * t.c;
  t.scale = kGeo.scale_offset + entry * 8 + group;
  // Value chunk k of entry e sits at chunk k ^ (e & 7); e & 7 = g for both rows.
  t.value = kGeo.value_offset + entry * 1024 + 128 * group + 16 * ((2 * t.c) ^ t.g);
  t.value_pair = kGeo.value_offset + entry * 1024 + 128 * group + 16 * ((2 * t.c + 1) ^ t.g);
  const int m = t.lane >> 3, row = t.lane & 7;
  // A = the block's 16 entries x 16 dims: matrices (rows 0-7 | 8-15) x (dims 0-7 | 8-15).
  t.score_a = kGeo.raw_offset + (16 * t.block + row + 8 * (m & 1)) * 1024 + 128 * group;
  t.score_swizzle = 16 * ((m >> 1) ^ row);
  // B = 16 dims x 8 heads, two n tiles per ldmatrix.x4: (heads 0-7: dims 0-7 | 8-15), (8-15).
  t.score_b =
      kGeo.query_offset + (8 * (m >> 1) + row) * kGeo.query_stride + 2 * 64 * group + 16 * (m & 1);
  t.pv_probs =
      kGeo.prob_offset + 2 * ((8 * (m >> 1) + row) % kHeadsPerCta * kGeo.prob_stride + 8 * (m & 1));
  const int pv_entry = 8 * (m >> 1) + row;
#pragma unroll
  for (int mt = 0; mt < kPvMTiles; ++mt) {
    const int chunk = (t.warp * kPvDims + 16 * mt) / 8 + (m & 1);
    t.pv_values[mt] =
        (kBf16Kv ? kGeo.raw_offset : kGeo.value_offset) + pv_entry * 1024 + 16 * (chunk ^ row);
  }
  return t;
}

// ---- gathering ----------------------------------------------------------------------------------

// kThreadsPerEntry threads copy each entry: thread t copies entry t / kThreadsPerEntry, chunks
// (t % kThreadsPerEntry) + kThreadsPerEntry * j, so its copies differ by constant offsets.
SMLA_DEVICE int gathered_entry() { return threadIdx.x / kThreadsPerEntry; }

// The index of this thread's entry of source `kSource`'s tile `local` (or -1 past the length).
template <int kSource>
SMLA_DEVICE int load_entry_index(const DecodeParams& p, int length, int row, int local) {
  const SourceParams& src = p.sources[kSource];
  const int column = local * kTileEntries + gathered_entry();
  if (column >= length) return -1;
  return __ldg(src.indices + (i64)row * src.index_row_stride + column);
}

SMLA_DEVICE int load_tile_index(const DecodeParams& p, int length0, int length1, int row,
                                int tile) {
  if (threadIdx.x >= kGatherThreads) return -1;
  if (tile < kGeo.tiles0) return load_entry_index<0>(p, length0, row, tile);
  return load_entry_index<1>(p, length1, row, tile - kGeo.tiles0);
}

// Issues this thread's copies of one tile of source `kSource` into `stage` (zero-filled where
// the entry is invalid, so nothing unselected is read) and records the entry's validity.
template <int kSource, int kPageSize>
SMLA_DEVICE void gather_source_tile(const DecodeParams& p, unsigned char* smem, int stage,
                                    int index) {
  const SourceParams& src = p.sources[kSource];
  const bool valid = index >= 0 && (i64)index < src.index_limit;
  const int page = valid ? index / kPageSize : 0;
  const int slot = valid ? index % kPageSize : 0;
  const i64 page_base = (i64)page * src.page_stride_bytes;
  constexpr int kTokenBytes = kPacked ? 576 : kBf16Kv ? 1024 : 512;
  const int entry = gathered_entry();
  const int first_chunk = threadIdx.x % kThreadsPerEntry;
  // With nothing to read (src_bytes 0) the source only has to be some address of the cache.
  const unsigned char* from = src.cache + page_base + slot * kTokenBytes + first_chunk * 16;
  const u32 to =
      smem_u32(smem + kGeo.raw_offset) + (stage * kTileEntries + entry) * kGeo.entry_bytes;
  const u32 bytes = valid ? 16u : 0u;
#pragma unroll
  for (int j = 0; j < kCopiesPerThread; ++j) {
    const int chunk = first_chunk + kThreadsPerEntry * j;
    if (chunk < kGeo.chunks_per_entry) {
      const int stored_chunk = kBf16Kv ? swizzled_chunk(entry, chunk) : chunk;
      cp_async_16(to + stored_chunk * 16, from + kThreadsPerEntry * 16 * j, bytes);
    }
  }
  if (first_chunk == 0) {
    if (kPacked) {
      const unsigned char* scales = src.cache + page_base + kPageSize * 576 + slot * 8;
      cp_async_8(smem_u32(smem + kGeo.scale_offset) + (stage * kTileEntries + entry) * 8, scales,
                 valid ? 8u : 0u);
    }
    smem[kGeo.valid_offset + stage * kTileEntries + entry] = valid ? 1 : 0;
  }
}

SMLA_DEVICE void gather_tile(const DecodeParams& p, unsigned char* smem, int tile, int stage,
                             int index) {
  if (threadIdx.x >= kGatherThreads) return;
  if (tile < kGeo.tiles0) {
    gather_source_tile<0, kPageSize0>(p, smem, stage, index);
  } else {
    gather_source_tile<1, kPageSize1>(p, smem, stage, index);
  }
}

// ---- the query tile -------------------------------------------------------------------------

// NOTE: for the fp8 layouts a thread's converted words are its A fragments (dequantize_and_score),
// whose k-step j of a 64-dim group holds dims 16c + 4j + {0, 1} (k = 2c, 2c + 1) and
// 16c + 4j + {2, 3} (k = 2c + 8, 2c + 9) for column pair c. The query tile stores each group in
// that k order, so its ldmatrix B fragments match; the bf16 layout keeps the natural order.
SMLA_DEVICE int query_position(int d) {
  if (kBf16Kv) return d;
  const int c = (d >> 4) & 3, j = (d >> 2) & 3, high = (d >> 1) & 1;
  return (d & ~63) + 16 * j + 8 * high + 2 * c + (d & 1);
}

// Heads past kNumHeads are zero: their scores are computed and never stored.
SMLA_DEVICE void load_query_tile(const DecodeParams& p, unsigned char* smem, int row,
                                 int head_group) {
  constexpr int kDimsPerLoad = kQFp8 ? 16 : 8;  // one 16-byte load
  constexpr int kLoadsPerHead = kHeadDim / kDimsPerLoad;
  for (int i = threadIdx.x; i < kHeadsPerCta * kLoadsPerHead; i += kThreads) {
    const int h = i / kLoadsPerHead;
    const int d = (i % kLoadsPerHead) * kDimsPerLoad;
    const int head = head_group * kHeadsPerCta + h;
    uint4 x = make_uint4(0u, 0u, 0u, 0u);
    if (head < kNumHeads) {
      const i64 offset = (i64)row * p.q_row_stride + (i64)head * p.q_head_stride + d;
      x = kQFp8 ? *(const uint4*)((const u8*)p.q + offset)
                : *(const uint4*)((const u16*)p.q + offset);
    }
    u32 words[kDimsPerLoad / 2];  // word k: dims d + 2k, d + 2k + 1
    if (kQFp8) {
      // The scale is folded into score_scale_log2; 2^(127 - 7) undoes the conversion's 2^-120.
      const u32 unit = bf16x2_pow2_multiplier(127);
      dequant_e4m3x4(x.x, unit, words[0], words[1]);
      dequant_e4m3x4(x.y, unit, words[2], words[3]);
      dequant_e4m3x4(x.z, unit, words[4], words[5]);
      dequant_e4m3x4(x.w, unit, words[6], words[7]);
    } else {
      words[0] = x.x, words[1] = x.y, words[2] = x.z, words[3] = x.w;
    }
    unsigned char* to = smem + kGeo.query_offset + h * kGeo.query_stride;
#pragma unroll
    for (int k = 0; k < kDimsPerLoad / 2; ++k)
      *(u32*)(to + 2 * query_position(d + 2 * k)) = words[k];
  }
}

// ---- dequantization and scores ----------------------------------------------------------------

// 8 fp8 dims (two words) times 2^(exponent - 127), as 4 bf16x2 words (word k: dims 2k, 2k+1).
SMLA_DEVICE void dequant8(u32 x0, u32 x1, u32 exponent, bool slow, uint4& out) {
  if (!slow) {
    const u32 multiplier = bf16x2_pow2_multiplier(exponent);
    dequant_e4m3x4(x0, multiplier, out.x, out.y);
    dequant_e4m3x4(x1, multiplier, out.z, out.w);
  } else {
    dequant_e4m3x4_slow(x0, exponent, out.x, out.y);
    dequant_e4m3x4_slow(x1, exponent, out.z, out.w);
  }
}

// Score accumulators: with one n tile, even and odd k-steps accumulate apart, so that two
// independent MMA chains hide the MMA latency (more chains spill at 16 heads).
constexpr int kScoreChains = kNTiles == 1 ? 2 : 1;
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

// S^T += A (16 entries x 16 k) B (k-step kk of the query tile, all heads).
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
  for (int nt = 0; nt < kNTiles; ++nt)
    mma_bf16(acc.s[kk % kScoreChains][nt], a, b[nt][0], b[nt][1]);
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
// part of the dims, for the fp8 layouts. Each thread converts 16 dims of entries g and g + 8 per
// 64-dim group (the only reads of the raw stage), writes them to the value tile for the value
// product, and uses the same words as its A fragments (query_position gives the k order).
// NOTE: one vote over the scale bytes comes first (each conversion reads its byte again, which
// costs fewer registers than keeping it), then the groups convert one at a time.
SMLA_DEVICE void dequantize_and_score(unsigned char* smem, const Lanes& t, int stage,
                                      float (&s)[kNTiles][4]) {
  const unsigned char* raw = smem + t.raw + stage * kTileEntries * kGeo.entry_bytes;
  const unsigned char* rope = smem + t.rope + stage * kTileEntries * kGeo.entry_bytes;
  const unsigned char* scales = smem + t.scale + stage * kTileEntries * 8;
  // The packed layout's bf16 rope dims are the last group of the last part.
  const bool rope_part = kPacked && t.part == kDimParts - 1;
  bool slow = false;
  if (kPacked) {
#pragma unroll
    for (int gi = 0; gi < kGroupsPerWarp; ++gi)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const bool is_rope = rope_part && gi == kGroupsPerWarp - 1;
        slow = slow || (!is_rope && scales[64 * r + gi] > kMaxFastScaleExponent);
      }
    // The fast multiplier covers every scale a real cache has; the vote keeps the rare fp32
    // path from costing a divergent branch.
    slow = __any_sync(0xffffffffu, slow);
  }

  const u32 base = smem_u32(smem);
  ScoreChains acc;
  clear_scores(acc);
#pragma unroll
  for (int gi = 0; gi < kGroupsPerWarp; ++gi) {
    uint4 words[2][2];  // [row][low, high]: words 0-3 and 4-7 (word i: dims 16c + 2i, +1)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      if (rope_part && gi == kGroupsPerWarp - 1) {
        words[r][0] = *(const uint4*)(rope + 8 * kGeo.entry_bytes * r);
        words[r][1] = *(const uint4*)(rope + 8 * kGeo.entry_bytes * r + 16);
      } else {
        const uint4 x = *(const uint4*)(raw + 64 * gi + 8 * kGeo.entry_bytes * r);
        const u32 exponent = kPacked ? scales[64 * r + gi] : 127u;
        dequant8(x.x, x.y, exponent, slow, words[r][0]);
        dequant8(x.z, x.w, exponent, slow, words[r][1]);
      }
      *(uint4*)(smem + t.value + 128 * gi + 8 * 1024 * r) = words[r][0];
      *(uint4*)(smem + t.value_pair + 128 * gi + 8 * 1024 * r) = words[r][1];
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {  // words 4h to 4h + 3 feed k-steps 2h and 2h + 1
      const uint4 w0 = words[0][h], w1 = words[1][h];
      const u32 a0[4] = {w0.x, w1.x, w0.y, w1.y};
      const u32 a1[4] = {w0.z, w1.z, w0.w, w1.w};
      score_step(base, t, 4 * gi + 2 * h, a0, acc);  // k-steps from the part's first group
      score_step(base, t, 4 * gi + 2 * h + 1, a1, acc);
    }
  }
  sum_chains(acc, s);
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
    score_step(base, t, kk, a, acc);
  }
  sum_chains(acc, s);
}

// Sums every part's partial scores of the values this thread owns, in part order, scaled to
// log2 units; -inf for invalid entries.
SMLA_DEVICE void owned_scores(const DecodeParams& p, unsigned char* smem, const Lanes& t, int stage,
                              float (&s)[kNTiles][4], float (&x)[kOwned]) {
  float* exchange = (float*)(smem + kGeo.exchange_offset);
#pragma unroll
  for (int v = 0; v < kValues; ++v) {
    // v = r * kCombos + combo; the loop is unrolled, so the index is a constant.
    exchange[(t.warp * kValues + v) * 32 + t.lane] =
        s[(v % kCombos) >> 1][2 * (v / kCombos) + (v & 1)];
  }
  named_barrier_sync(1 + t.block, 32 * kDimParts);
#pragma unroll
  for (int k = 0; k < kOwned; ++k) {
    const int v = t.part + kDimParts * k;
    float sum = 0.0f;
#pragma unroll
    for (int part = 0; part < kDimParts; ++part) {
      sum += exchange[((t.block + kEntryBlocks * part) * kValues + v) * 32 + t.lane];
    }
    const bool valid =
        smem[kGeo.valid_offset + stage * kTileEntries + t.score_entry(t.owned_row(k))] != 0;
    x[k] = valid ? sum * p.score_scale_log2 : neg_inf();
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

// Writes the column reduction (max or sum over the owned entries) of each owned head into its
// slot; `values` are per owned value.
template <bool kMax>
SMLA_DEVICE void write_slots(const Lanes& t, float* slots, const float (&values)[kOwned]) {
  constexpr int kColumns = kOwn.both_rows ? kOwned / 2 : kOwned;
#pragma unroll
  for (int k = 0; k < kColumns; ++k) {
    float v = values[k];
    if (kOwn.both_rows) v = kMax ? fmaxf(v, values[k + kColumns]) : v + values[k + kColumns];
    v = kMax ? column_max(v) : column_sum(v);
    const int slot = t.block * kOwn.row_slots + (kOwn.row_slots == 2 ? t.owned_row(k) : 0);
    if (t.g == 0) slots[t.head(t.owned_combo(k)) * kOwn.slots_per_head + slot] = v;
  }
}

// Reads the slots of one head and reduces them in slot order.
template <bool kMax>
SMLA_DEVICE float read_slots(const float* slots, int head) {
  const float* s = slots + head * kOwn.slots_per_head;
  float r = kMax ? neg_inf() : 0.0f;
#pragma unroll
  for (int i = 0; i < kOwn.slots_per_head; i += 2) {
    const float2 v = *(const float2*)(s + i);
    r = kMax ? fmaxf(fmaxf(r, v.x), v.y) : r + v.x + v.y;
  }
  return r;
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

// O^T of this warp's dims: element e of [mt][nt] is dim 16mt + g (+8 for e >= 2), head
// 8nt + 2c + (e & 1), i.e. combo 2nt + (e & 1).
struct Accumulators {
  float o[kPvMTiles][kNTiles][4];
  float total[kFolds ? kPvMTiles : 1][kFolds ? kNTiles : 1][4];  // whole-row mode's folded total
};

SMLA_DEVICE void accumulate_values(unsigned char* smem, const Lanes& t, int stage,
                                   Accumulators& acc) {
  const u32 base = smem_u32(smem);
  const u32 values = base + (kBf16Kv ? stage * kTileEntries * 1024 : 0);
#pragma unroll
  for (int ks = 0; ks < kPvKSteps; ++ks) {
    u32 b[kNTiles][2];
#pragma unroll
    for (int np = 0; np < kNTiles; np += 2) {
      const u32 address = base + t.pv_probs + 2 * (np * 8 * kGeo.prob_stride + 16 * ks);
      if (kNTiles == 1) {
        ldmatrix_x2(address, b[np][0], b[np][1]);
      } else {
        ldmatrix_x4(address, b[np][0], b[np][1], b[np + 1][0], b[np + 1][1]);
      }
    }
#pragma unroll
    for (int mt = 0; mt < kPvMTiles; ++mt) {
      u32 a[4];
      ldmatrix_x4_trans(values + t.pv_values[mt] + 16 * 1024 * ks, a[0], a[1], a[2], a[3]);
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt) mma_bf16(acc.o[mt][nt], a, b[nt][0], b[nt][1]);
    }
  }
}

SMLA_DEVICE float sink_log2(const DecodeParams& p, int head) {
  if (!kHasSink || head >= kNumHeads) return neg_inf();
  return __fmul_rn(p.sink[head], kLog2e);
}

// NOTE: within a segment the probabilities are exp2(score - m) for a running reference m that
// is raised only when a score exceeds it by more than kLazyMargin (log2 units), so P <= 2^16
// (bf16 and the fp32 sums hold it with room to spare) and most tiles need neither the per-head
// maxima nor a rescale: one barrier and ~100 instructions per warp less. The first tile of a
// segment always sets m to its exact maximum.
constexpr float kLazyMargin = 16.0f;

SMLA_DEVICE void run_cta(const DecodeParams& p, unsigned char* smem, int length0, int length1,
                         int row, int head_group, int begin, int end, i64 item) {
  const Lanes t = make_lanes();
  float* maxima = (float*)(smem + kGeo.reduce_offset);
  float* sums = maxima + kHeadsPerCta * kOwn.slots_per_head;
  u16* probs = (u16*)(smem + kGeo.prob_offset);

  Accumulators acc;
#pragma unroll
  for (int mt = 0; mt < kPvMTiles; ++mt)
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        acc.o[mt][nt][e] = 0.0f;
        if (kFolds) acc.total[kFolds ? mt : 0][kFolds ? nt : 0][e] = 0.0f;
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

  load_query_tile(p, smem, row, head_group);

  // Pipeline: walk position i lives in stage i % kStages; positions up to kStages - 1 ahead
  // are in flight, and their indices are loaded two iterations before their copies.
  const TileWalk walk = make_walk(length0, length1, begin, end);
  int fetch_tile = walk.first;  // the tile of position i + kStages - 1 (after the prologue)
  {
    int tiles[kStages - 1], first[kStages - 1];
#pragma unroll
    for (int j = 0; j < kStages - 1; ++j) {
      tiles[j] = fetch_tile;
      first[j] = j < walk.count ? load_tile_index(p, length0, length1, row, fetch_tile) : -1;
      fetch_tile = walk.next(fetch_tile);
    }
#pragma unroll
    for (int j = 0; j < kStages - 1; ++j) {
      if (j < walk.count) gather_tile(p, smem, tiles[j], j, first[j]);
      cp_async_commit();
    }
  }
  int next_index =
      kStages - 1 < walk.count ? load_tile_index(p, length0, length1, row, fetch_tile) : -1;
  int index_tile = walk.next(walk.next(fetch_tile));  // the tile of position i + kStages + 1
  int later_index =
      kStages < walk.count ? load_tile_index(p, length0, length1, row, walk.next(fetch_tile)) : -1;

  int tile = walk.first;
  int stage = 0, fetch_stage = kStages - 1;
  bool segment_fresh = true;  // no tile of the current segment is done: acc.o is zero
  for (int i = 0; i < walk.count; ++i) {
    cp_async_wait<kStages - 2>();
    // Position i has landed for every thread, and every warp is done with position i - 1.
    __syncthreads();
    if (i + kStages - 1 < walk.count) gather_tile(p, smem, fetch_tile, fetch_stage, next_index);
    cp_async_commit();
    fetch_tile = walk.next(fetch_tile);
    fetch_stage = stage;
    next_index = later_index;
    later_index =
        i + kStages + 1 < walk.count ? load_tile_index(p, length0, length1, row, index_tile) : -1;
    index_tile = walk.next(index_tile);

    float s[kNTiles][4];
    if (kBf16Kv) {
      bf16_scores(smem, t, stage, s);
    } else {
      dequantize_and_score(smem, t, stage, s);
    }
    float x[kOwned];
    owned_scores(p, smem, t, stage, s, x);

    // Probabilities against the current reference; any score above it by the margin (or a
    // first valid score) makes every thread take the exact path below.
    // NOTE: the sums add the fp32 probabilities: with a lazy reference the largest terms are
    // not exactly 1, and summing their bf16 roundings would cost the lse ~2^-9.
    bool raise = false;
    float prob[kOwned];
#pragma unroll
    for (int k = 0; k < kOwned; ++k) {
      const int combo = t.owned_combo(k);
      const float m = pick(seg_max, combo);
      raise = raise || x[k] > m + kLazyMargin;
      prob[k] = x[k] == neg_inf() ? 0.0f : exp2_approx(x[k] - m);
      probs[t.head(combo) * kGeo.prob_stride + t.score_entry(t.owned_row(k))] =
          (u16)pack_bf16x2(prob[k], 0.0f);
    }
    // The probabilities (if no reference moves) and the value tile are complete.
    if (!syncthreads_any(raise)) {
#pragma unroll
      for (int k = 0; k < kOwned; ++k) owned_sum[k] = __fadd_rn(owned_sum[k], prob[k]);
    } else {
      write_slots<true>(t, maxima, x);
      __syncthreads();
      float rescale[kCombos];
#pragma unroll
      for (int k = 0; k < kCombos; ++k) {
        const float new_max = fmaxf(seg_max[k], read_slots<true>(maxima, t.head(k)));
        rescale[k] = seg_max[k] == neg_inf() ? 0.0f : exp2_approx(seg_max[k] - new_max);
        seg_max[k] = new_max;
      }
#pragma unroll
      for (int k = 0; k < kOwned; ++k) {
        const int combo = t.owned_combo(k);
        const float exact = x[k] == neg_inf() ? 0.0f : exp2_approx(x[k] - pick(seg_max, combo));
        probs[t.head(combo) * kGeo.prob_stride + t.score_entry(t.owned_row(k))] =
            (u16)pack_bf16x2(exact, 0.0f);
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
    accumulate_values(smem, t, stage, acc);

    const int next_tile = walk.next(tile);
    const bool segment_ends =
        i + 1 == walk.count || next_tile / kSegmentTiles != tile / kSegmentTiles;
    tile = next_tile;
    stage = stage + 1 == kStages ? 0 : stage + 1;
    segment_fresh = segment_ends;
    if (segment_ends) {
      write_slots<false>(t, sums, owned_sum);
      __syncthreads();
      float seg_sum[kCombos];
#pragma unroll
      for (int k = 0; k < kCombos; ++k) seg_sum[k] = read_slots<false>(sums, t.head(k));
      // In split mode (or with one segment) the CTA's only segment is the total: see below.
      if (kFolds && !p.split) {
        const float* from = folded + (folds % 2) * 2 * kHeadsPerCta;
        float* to = folded + (1 - folds % 2) * 2 * kHeadsPerCta;
        ++folds;
        FoldStep step[kCombos];
#pragma unroll
        for (int k = 0; k < kCombos; ++k) {
          float total_max = from[2 * t.head(k)], total_sum = from[2 * t.head(k) + 1];
          step[k] = fold_state(total_max, total_sum, seg_max[k], seg_sum[k]);
          if (folds_writer) to[2 * t.head(k)] = total_max, to[2 * t.head(k) + 1] = total_sum;
        }
#pragma unroll
        for (int mt = 0; mt < kPvMTiles; ++mt)
#pragma unroll
          for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              float& total = acc.total[kFolds ? mt : 0][kFolds ? nt : 0][e];
              total = fold_value(total, acc.o[mt][nt][e], step[2 * nt + (e & 1)]);
              acc.o[mt][nt][e] = 0.0f;
            }
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
      total_sum[k] = walk.count > 0 ? read_slots<false>(sums, t.head(k)) : 0.0f;
    }
  }

  const int dim0 = t.warp * kPvDims + t.g;
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
        for (int e = 0; e < 4; ++e)
          out[t.head(2 * nt + (e & 1)) * kHeadDim + dim0 + 16 * mt + 8 * (e >> 1)] =
              acc.o[mt][nt][e];
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
    u16* out = (u16*)p.out + (i64)row * p.out_row_stride + (i64)head * p.out_head_stride + dim0;
    const int nt = k >> 1;
#pragma unroll
    for (int mt = 0; mt < kPvMTiles; ++mt)
#pragma unroll
      for (int e = k & 1; e < 4; e += 2) {
        const float v = kFolds ? acc.total[kFolds ? mt : 0][kFolds ? nt : 0][e] : acc.o[mt][nt][e];
        out[16 * mt + 8 * (e >> 1)] = (u16)pack_bf16x2(__fmul_rn(v, factor), 0.0f);
      }
  }
}

}  // namespace decode
}  // namespace smla

extern "C" __global__ void __maxnreg__(smla::decode::kMaxRegisters)
    smla_decode(const __grid_constant__ smla::DecodeParams p) {
  using namespace smla;
  using namespace smla::decode;
  extern __shared__ __align__(16) unsigned char smem[];
  // The combine kernel may start launching now; it waits for this grid to finish.
  launch_dependents();
  // Work item: head group fastest, so the CTAs that read the same entries run side by side.
  const i64 item = blockIdx.x;
  const int head_group = (int)(item % kHeadGroups);
  const i64 rest = item / kHeadGroups;
  const int segment = p.split ? (int)(rest % kGeo.segments) : 0;
  const int row = p.split ? (int)(rest / kGeo.segments) : (int)rest;
  const int begin = p.split ? segment * kSegmentTiles : 0;
  const int end = p.split ? min(begin + kSegmentTiles, kGeo.tiles) : kGeo.tiles;
  const int length0 = clamp_length(p.sources[0].lengths, row, kWidth0);
  const int length1 = kNumSources > 1 ? clamp_length(p.sources[1].lengths, row, kWidth1) : 0;
  run_cta(p, smem, length0, length1, row, head_group, begin, end, item);
}
