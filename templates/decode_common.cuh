// What the decode kernels share (decode_kernel.cuh: entries on the MMAs' M;
// decode_heads_m_kernel.cuh: heads on M): the constants of the specialization, the walk over a
// row's tiles, the gather into the shared-memory ring, the query tile, and small helpers. Included
// inside namespace smla::decode after the generated prologue (namespace smla::cfg).
#pragma once

#include "decode_geometry.cuh"
#include "decode_params.cuh"
#include "segment_fold.cuh"
#include "smla_device.cuh"

namespace smla {
namespace decode {

using namespace cfg;
constexpr DecodeShape kShape = {kHeadsPerCta, kWarps,      kTileEntries, kStages,    kSegmentTiles,
                                kLayout,      kNumSources, kWidth0,      kWidth1,    kHeadsOnM,
                                kWgmma,       kQFp8,       kWantLse,     kE4m3Scores};
constexpr DecodeGeometry kGeo = decode_geometry(kShape);

constexpr bool kPacked = kLayout == kLayoutPacked;
constexpr bool kBf16Kv = kLayout == kLayoutBf16;
constexpr int kThreads = kWarps * 32;
constexpr int kRopeDim0 = 448;  // the packed layout's bf16 rope dims start here
constexpr int kHeadGroups = (kNumHeads + kHeadsPerCta - 1) / kHeadsPerCta;
// NOTE: 4 threads copy an entry (9 chunks each for the packed layout): fewer threads than the
// CTA's share the per-entry address arithmetic, and the other warps skip gathering (8 threads,
// every warp gathering a share: 1-4% slower at 16 heads).
constexpr int kThreadsPerEntry = 4;
constexpr int kGatherThreads = kThreadsPerEntry * kTileEntries;
constexpr int kCopiesPerThread = (kGeo.chunks_per_entry + kThreadsPerEntry - 1) / kThreadsPerEntry;
// Registers per thread so that kMinBlocksPerSm CTAs fit: each of the 4 schedulers has a
// quarter of the register file for the warps it holds.
constexpr int kWarpsPerScheduler = (kWarps * kMinBlocksPerSm + 3) / 4;
constexpr int kMaxRegisters = 16384 / (32 * kWarpsPerScheduler) / 8 * 8 > 255
                                  ? 255
                                  : 16384 / (32 * kWarpsPerScheduler) / 8 * 8;

static_assert(kGatherThreads <= kThreads && kGatherThreads % 32 == 0, "whole gathering warps");
static_assert(kGeo.smem_bytes <= kArchSmemPerCta, "shared memory per block");

// The nonempty tiles of a row inside [begin, end), in order: source 0's tiles up to its length,
// then source 1's. Gathering and computing walk the same list.
struct TileWalk {
  int first;         // the first tile (meaningless when count is 0)
  int first_end;     // source 0's nonempty tiles end here...
  int second_begin;  // ...and source 1's begin here
  int count;
  SMLA_DEVICE int next(int tile) const { return tile + 1 == first_end ? second_begin : tile + 1; }
  // The walk's i-th tile (i < count). NOTE: without source 0's tiles, first is second_begin
  // and first_end lies before it.
  SMLA_DEVICE int at(int i) const {
    const int first_count = first_end > first ? first_end - first : 0;
    return i < first_count ? first + i : second_begin + (i - first_count);
  }
};

SMLA_DEVICE int clamp_length(const int* lengths, int row, int width) {
  if (lengths == nullptr) return width;
  const int length = lengths[row];
  return length < 0 ? 0 : (length > width ? width : length);
}

// Source kinds (smla_source_kind values): a per-row index table, or a window or a prefix of the
// row's request's block table.
constexpr int kKindList = 0;
constexpr int kKindWindow = 1;
constexpr int kKindPrefix = 2;
constexpr bool kStructured = kKind0 != kKindList || (kNumSources > 1 && kKind1 != kKindList);

// A row's entries of one source: a list's length (clamped to its width); a window's tokens
// max(0, pos - width + 1) .. pos (*first the first); a prefix's floor((pos + 1) / ratio) entries,
// at most its width. NOTE: pos is 64-bit and *first kept below 2^31 - width, so that whatever a
// replayed graph's device arrays hold, no token number overflows.
template <int kKind, int kWidth, int kRatio>
SMLA_DEVICE int source_length(const int* lengths, int row, i64 pos, int* first) {
  if (kKind == kKindList) return clamp_length(lengths, row, kWidth);
  const i64 count = kKind == kKindWindow ? pos + 1 : (pos + 1) / (kRatio > 0 ? kRatio : 1);
  const int length = count < 0 ? 0 : (count > kWidth ? kWidth : (int)count);
  if (kKind == kKindWindow) {
    const i64 start = pos + 1 - length;  // >= 0 whenever length > 0
    *first = start > (i64)(0x7fffffff - kWidth) ? 0x7fffffff - kWidth : (int)max(start, (i64)0);
  }
  return length;
}

// A structured source's span of `length` entries from `first`, cut where its request's
// block-table row ends (columns past index_row_stride are never read); *base its first
// block-table position. NOTE: validation keeps num_requests * index_row_stride * page_size
// below 2^31, so positions fit an int.
template <int kPageSize>
SMLA_DEVICE int table_span(const SourceParams& src, int request, int first, int length, int* base) {
  const i64 capacity = src.index_row_stride * kPageSize;
  if (first >= capacity) return 0;
  *base = (int)(request * capacity + first);
  return (int)min((i64)length, capacity - first);
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

// Where chunk `chunk` of entry `entry` sits in its stage. The XOR swizzle puts one chunk of
// eight consecutive entries (an ldmatrix) and a quarter warp's 16-byte reads in distinct banks.
// fp8 entries are 36 chunks, so odd entries already start half a bank cycle later: two bits
// suffice, and a chunk stays inside its aligned group of four.
SMLA_DEVICE int stored_chunk(int entry, int chunk) {
  return kBf16Kv ? chunk ^ (entry & 7) : chunk ^ ((entry >> 1) & 3);
}

// Dims whose values are bf16 (the bf16 layout, the packed rope): bf16 products. The others
// are e4m3, multiplied as f16.
SMLA_DEVICE bool bf16_dims(int d) { return kBf16Kv || (kPacked && d >= kRopeDim0); }

// Reduces v over the 4 lanes of an MMA fragment row (the low two bits of the lane).
SMLA_DEVICE float quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
SMLA_DEVICE float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// ---- gathering ----------------------------------------------------------------------------------

// With e4m3 operand stages (decode_geometry.cuh) a stage is the K-major operand of an 8-bit
// product with the 128-byte swizzle: chunk c of entry e (dims 16c .. 16c + 15) sits in column
// block c / 8, row e, at chunk (c % 8) ^ (e % 8). The wgmma kernel lays out its fp8 query so too.
constexpr bool kOperandStages = e4m3_operand_stages(kShape);
constexpr int kOperandBlockBytes = 64 * 128;  // 64 rows of 128 bytes
SMLA_DEVICE int operand_chunk_offset(int row, int chunk) {
  return (chunk >> 3) * kOperandBlockBytes + row * 128 + (((chunk & 7) ^ (row & 7)) << 4);
}
static_assert(!kOperandStages || kTileEntries == 64, "operand stages of 64 entries");

// kThreadsPerEntry threads copy each entry: thread t copies entry t / kThreadsPerEntry, chunks
// (t % kThreadsPerEntry) + kThreadsPerEntry * j, so its copies differ by constant offsets.
// The fp8 layouts' swizzle only flips the two low bits of the chunk, so the stored chunks differ
// by the same constants (the bf16 layout's three-bit swizzle and operand stages do not).
constexpr bool kConstantChunkStride = !kBf16Kv && !kOperandStages;
SMLA_DEVICE int gathered_entry() { return threadIdx.x / kThreadsPerEntry; }

// The work of one CTA, head group fastest, so the CTAs that read the same entries run side by
// side. Whole-row mode: one CTA a row. Split mode cuts each row into items: item 0 is the row's
// first p.prefix_segments segments, folded as whole-row mode folds them, each later item one
// segment; the combine kernel folds a row's items in order, so a row's bits are those of its
// whole-row CTA whatever the cut. With prefix items the grid has a row of CTAs per item
// (blockIdx.y = k), so that items 0, the longest, come first; without, CTA (row, k, head group)
// along x.
// NOTE: prefix calls take k from the grid, with no division by the runtime row count; the
// prefix path costs plain splits ~2% (a 1-row call of 16 heads on an H100: 8.12 against 7.97 us
// without it).
struct WorkItem {
  i64 item;  // the CTA's index, in split mode its partial's slot
  int row, head_group, begin, end, length0, length1;
  // Structured sources: the row's first entry as a block-table position, (its request's table
  // row) * page_size + (its first logical entry); entry c of the row is at base + c.
  int base0, base1;
};

// The physical index of the entry at block-table position `position` (table element
// position / page_size), or -1 where the page is out of range: never read past it.
template <int kPageSize>
SMLA_DEVICE int block_table_index(const SourceParams& src, int position) {
  const int page = __ldg(src.indices + position / kPageSize);
  if (page < 0 || (i64)page * kPageSize >= src.index_limit) return -1;
  return page * kPageSize + position % kPageSize;
}

// The index of this thread's entry of source `kSource`'s tile `local` (or -1 past the length).
template <int kSource>
SMLA_DEVICE int load_entry_index(const DecodeParams& p, const WorkItem& w, int local) {
  const SourceParams& src = p.sources[kSource];
  const int column = local * kTileEntries + gathered_entry();
  if (column >= (kSource == 0 ? w.length0 : w.length1)) return -1;
  constexpr int kKind = kSource == 0 ? kKind0 : kKind1;
  if (kKind == kKindList) return __ldg(src.indices + (i64)w.row * src.index_row_stride + column);
  constexpr int kPage = kSource == 0 ? kPageSize0 : kPageSize1;
  return block_table_index<kPage>(src, (kSource == 0 ? w.base0 : w.base1) + column);
}

SMLA_DEVICE int load_tile_index(const DecodeParams& p, const WorkItem& w, int tile) {
  if (threadIdx.x >= kGatherThreads) return -1;
  if (tile < kGeo.tiles0) return load_entry_index<0>(p, w, tile);
  return load_entry_index<1>(p, w, tile - kGeo.tiles0);
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
  const u32 to = smem_u32(smem + kGeo.raw_offset) +
                 (stage * kTileEntries + (kOperandStages ? 0 : entry)) * kGeo.entry_bytes;
  const u32 bytes = valid ? 16u : 0u;
  // NOTE: the scale copy and the validity byte go first: a register rewritten right after the
  // last 16-byte copy waits until the copies have left the queue of the load/store unit (the
  // kernel's hottest stall, ncu); after them the code rewrites nothing they read. Up to 2% faster.
  if (first_chunk == 0) {
    if (kPacked) {
      const unsigned char* scales = src.cache + page_base + kPageSize * 576 + slot * 8;
      cp_async_8(smem_u32(smem + kGeo.scale_offset) + (stage * kTileEntries + entry) * 8, scales,
                 valid ? 8u : 0u);
    }
    smem[kGeo.valid_offset + stage * kTileEntries + entry] = valid ? 1 : 0;
  }
#pragma unroll
  for (int j = 0; j < kCopiesPerThread; ++j) {
    const int chunk = first_chunk + kThreadsPerEntry * j;
    if (chunk < kGeo.chunks_per_entry) {
      const int offset = kOperandStages ? operand_chunk_offset(entry, chunk)
                         : kConstantChunkStride
                             ? 16 * (stored_chunk(entry, first_chunk) + kThreadsPerEntry * j)
                             : 16 * stored_chunk(entry, chunk);
      cp_async_16(to + offset, from + kThreadsPerEntry * 16 * j, bytes);
    }
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

// The ring of gathered tiles. Walk position i lives in stage i % kStages; positions up to
// kStages - 1 ahead are in flight, and their indices are loaded two positions before their
// copies. Every thread of the CTA calls start() once, and advance(i) at the top of position i
// after the barrier that makes stage i % kStages reusable.
struct GatherRing {
  int fetch_tile;   // the tile of position i + kStages - 1
  int fetch_stage;  // its stage
  int next_index;   // this thread's index of that tile
  int later_index;  // ... of position i + kStages's tile
  int index_tile;   // the tile of position i + kStages + 1

  SMLA_DEVICE void start(const DecodeParams& p, unsigned char* smem, const TileWalk& walk,
                         const WorkItem& w) {
    fetch_tile = walk.first;
    int tiles[kStages - 1], first[kStages - 1];
#pragma unroll
    for (int j = 0; j < kStages - 1; ++j) {
      tiles[j] = fetch_tile;
      first[j] = j < walk.count ? load_tile_index(p, w, fetch_tile) : -1;
      fetch_tile = walk.next(fetch_tile);
    }
#pragma unroll
    for (int j = 0; j < kStages - 1; ++j) {
      if (j < walk.count) gather_tile(p, smem, tiles[j], j, first[j]);
      cp_async_commit();
    }
    next_index = kStages - 1 < walk.count ? load_tile_index(p, w, fetch_tile) : -1;
    index_tile = walk.next(walk.next(fetch_tile));
    later_index = kStages < walk.count ? load_tile_index(p, w, walk.next(fetch_tile)) : -1;
    fetch_stage = kStages - 1;
  }

  // Position i, in `stage`, is about to be computed: issues position i + kStages - 1's copies
  // into the stage position i - 1 used.
  SMLA_DEVICE void advance(const DecodeParams& p, unsigned char* smem, const TileWalk& walk,
                           const WorkItem& w, int i, int stage) {
    if (i + kStages - 1 < walk.count) gather_tile(p, smem, fetch_tile, fetch_stage, next_index);
    cp_async_commit();
    fetch_tile = walk.next(fetch_tile);
    fetch_stage = stage;
    next_index = later_index;
    later_index = i + kStages + 1 < walk.count ? load_tile_index(p, w, index_tile) : -1;
    index_tile = walk.next(index_tile);
  }
};

// ---- the query tile -------------------------------------------------------------------------

// NOTE: for the fp8 layouts a thread's converted words are its A fragments (fp8_scores), whose
// k-step j of a 64-dim group holds dims 16c + 4j + {0, 1} (k = 2c, 2c + 1) and
// 16c + 4j + {2, 3} (k = 2c + 8, 2c + 9) for column pair c. The query tile stores each group in
// that k order, so its ldmatrix B fragments match; the bf16 layout keeps the natural order.
// The packed rope group (bf16, 8 dims per chunk) is read as chunks c and c + 4 (Lanes::rope),
// chunk h feeding k-steps 2h and 2h + 1 with two words each.
SMLA_DEVICE int query_position(int d) {
  if (kBf16Kv) return d;
  if (bf16_dims(d)) {
    const int r = d - kRopeDim0;
    const int c = (r >> 3) & 3, j = 2 * (r >> 5) + ((r >> 2) & 1), high = (r >> 1) & 1;
    return kRopeDim0 + 16 * j + 8 * high + 2 * c + (d & 1);
  }
  const int c = (d >> 4) & 3, j = (d >> 2) & 3, high = (d >> 1) & 1;
  return (d & ~63) + 16 * j + 8 * high + 2 * c + (d & 1);
}

// With e4m3 scores (decode_kernel_lanes.cuh: kE4m3Scores) a thread's 16 raw bytes of a 64-dim group
// (dims 16c .. 16c + 15) are the A fragments of its two k-steps: k-step j takes dims 16c + 8j +
// {0..3} (k = 4c..4c + 3) and 16c + 8j + {4..7} (k = 16 + 4c..). The query tile stores a group's
// e4m3 bytes as four 16-byte matrices (j, half) of 8-head rows, byte 4c + i of a row holding dim
// 16c + 8j + 4 * half + i, so one ldmatrix.x4 gives a thread B fragments b0, b1 of both k-steps.
// The byte offset of dim d:
SMLA_DEVICE int e4m3_position(int d) {
  const int r = d & 63, c = r >> 4, j = (r >> 3) & 1, half = (r >> 2) & 1;
  return (d & ~63) + 32 * j + 16 * half + 4 * c + (r & 3);
}

// bf16 q meets the fp8 layouts' f16 products scaled by 2^e per head, e putting the head's |q|
// maximum in [2^14, 2^15): f16 then holds every value with its bf16 precision, far from
// overflow. The scores' factor undoes it.
constexpr bool kScaledQuery = !kBf16Kv && !kQFp8;

SMLA_DEVICE int query_exponent(u32 amax_bits) {
  const int biased = (int)(amax_bits >> 23);  // 0 for a zero (or subnormal) head: left as is
  return biased == 0 ? 0 : min(141 - biased, 126);
}

SMLA_DEVICE uint4 load_query_chunk(const DecodeParams& p, int row, int head, int d) {
  if (head >= kNumHeads) return make_uint4(0u, 0u, 0u, 0u);
  const i64 offset = (i64)row * p.q_row_stride + (i64)head * p.q_head_stride + d;
  return kQFp8 ? *(const uint4*)((const u8*)p.q + offset)
               : *(const uint4*)((const u16*)p.q + offset);
}

// The query tile in the products' types: f16 where it meets e4m3 values, bf16 where it meets
// bf16 ones; and the per-head factor of the scores (fp8 layouts; query_factor_offset). One warp
// converts a whole head, so the head's |q| maximum is a warp reduction: no block barrier.
// Heads past kNumHeads are zero: their scores are computed and never stored.
// With kE4m3Query (fp8 q meeting e4m3 MMAs) the fp8 dims keep q's bytes at e4m3_position.
template <bool kE4m3Query>
SMLA_DEVICE void load_query_tile(const DecodeParams& p, unsigned char* smem, int row,
                                 int head_group) {
  constexpr int kDimsPerLoad = kQFp8 ? 16 : 8;  // one 16-byte load
  constexpr int kLoadsPerLane = kHeadDim / kDimsPerLoad / 32;
  const int lane = threadIdx.x & 31;
  for (int h = threadIdx.x / 32; h < kHeadsPerCta; h += kWarps) {
    const int head = head_group * kHeadsPerCta + h;
    uint4 x[kLoadsPerLane];
    u32 amax = 0u;  // float bits of the largest |q| (bf16 q only)
#pragma unroll
    for (int j = 0; j < kLoadsPerLane; ++j) {
      x[j] = load_query_chunk(p, row, head, (lane + 32 * j) * kDimsPerLoad);
      const u32 words[4] = {x[j].x, x[j].y, x[j].z, x[j].w};
#pragma unroll
      for (int k = 0; k < 4; ++k)
        amax = max(amax, max(words[k] << 17 >> 1, words[k] & 0x7fff0000u));
    }
    const int e = kScaledQuery ? query_exponent(warp_max(amax)) : 0;
    const float multiplier = pow2(e);
#pragma unroll
    for (int j = 0; j < kLoadsPerLane; ++j) {
      const int d = (lane + 32 * j) * kDimsPerLoad;
      const u32 in[4] = {x[j].x, x[j].y, x[j].z, x[j].w};
      unsigned char* to = smem + kGeo.query_offset + h * kGeo.query_stride;
      if (kE4m3Query && !bf16_dims(d)) {  // the bytes as they are, 4 dims at a time
#pragma unroll
        for (int k = 0; k < 4; ++k) *(u32*)(to + e4m3_position(d + 4 * k)) = in[k];
        continue;
      }
      u32 words[kDimsPerLoad / 2];  // word k: dims d + 2k, d + 2k + 1
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        if (kQFp8) {  // the scale is in score_scale_log2; both conversions are exact
          if (bf16_dims(d)) {
            e4m3x4_to_bf16x2(in[k], words[2 * k], words[2 * k + 1]);
          } else {
            e4m3x4_to_f16x2(in[k], words[2 * k], words[2 * k + 1]);
          }
        } else if (kScaledQuery) {
          const float low = bf16_low(in[k]) * multiplier, high = bf16_high(in[k]) * multiplier;
          words[k] = bf16_dims(d) ? pack_bf16x2(low, high) : pack_f16x2(low, high);
        } else {
          words[k] = in[k];
        }
      }
#pragma unroll
      for (int k = 0; k < kDimsPerLoad / 2; ++k)
        *(u32*)(to + 2 * query_position(d + 2 * k)) = words[k];
    }
    if (!kBf16Kv && lane == 0) {
      ((float*)(smem + kGeo.query_factor_offset))[h] = p.score_scale_log2 * pow2(-e);
    }
  }
}

// The factor from a score sum to log2 units: score_scale_log2, times 2^-e for a scaled query.
SMLA_DEVICE float score_factor(const DecodeParams& p, const unsigned char* smem, int head) {
  if (kBf16Kv) return p.score_scale_log2;
  return ((const float*)(smem + kGeo.query_factor_offset))[head];
}

// ---- the packed scales of the values -----------------------------------------------------------

// NOTE (packed layout): the value product multiplies the raw e4m3 values (exact in f16), and
// each entry's scale moves into its probabilities: P' = P * 2^(s - ref) for the scale byte s of
// the warp's group, where ref is the segment's running maximum of those bytes, so P' <= P fits
// f16. The group's accumulators are in units of 2^(ref - 127) until the segment ends
// (finish_value_scales); a tile that raises ref rescales them by an exact power of 2.
// NOTE: f16 keeps P' to 2^-24: an entry whose group scale is 2^k below the segment's largest
// loses precision where P * 2^-k < 2^-14, which matters only for spreads of well over 2^10
// within one segment (random tokens here spread over 2^5).
template <int kGroups>
struct ValueScales {
  int ref[kGroups];
};

// Sets this warp's factor table 2^(s - ref) (f16, per group and entry) for the tile in `stage`,
// raising ref (the first tile of a segment sets it). Group j is the 64 dims from
// t.group_dim0(j); scale_group(j, factor) multiplies the warp's accumulators of group j.
template <int kGroups, typename Lanes, typename ScaleGroup>
SMLA_DEVICE void prepare_value_scales(unsigned char* smem, const Lanes& t, int stage, bool fresh,
                                      ValueScales<kGroups>& vs, ScaleGroup scale_group) {
  const u8* scales = smem + kGeo.scale_offset + stage * kTileEntries * 8;
  u16* factors = (u16*)(smem + kGeo.value_factor_offset) + t.warp * kGroups * kTileEntries;
#pragma unroll
  for (int j = 0; j < kGroups; ++j) {
    const int d0 = t.group_dim0(j);
    if (bf16_dims(d0)) continue;
    u32 bytes[kTileEntries / 32];
    u32 top = 0u;
#pragma unroll
    for (int i = 0; i < kTileEntries / 32; ++i) {
      bytes[i] = scales[(t.lane + 32 * i) * 8 + d0 / 64];
      top = max(top, bytes[i]);
    }
    top = warp_max(top);
    if (fresh) {
      vs.ref[j] = (int)top;
    } else if ((int)top > vs.ref[j]) {
      scale_group(j, pow2(max(vs.ref[j] - (int)top, -126)));
      vs.ref[j] = (int)top;
    }
#pragma unroll
    for (int i = 0; i < kTileEntries / 32; ++i) {
      const float factor = pow2(max((int)bytes[i] - vs.ref[j], -126));
      factors[j * kTileEntries + t.lane + 32 * i] = (u16)pack_f16x2(factor, 0.0f);
    }
  }
  __syncwarp();
}

// At a segment's end: the fp8 groups' accumulators to plain units, times 2^(ref - 127).
template <int kGroups, typename Lanes, typename ScaleGroup>
SMLA_DEVICE void finish_value_scales(const Lanes& t, const ValueScales<kGroups>& vs,
                                     ScaleGroup scale_group) {
#pragma unroll
  for (int j = 0; j < kGroups; ++j) {
    if (!bf16_dims(t.group_dim0(j))) scale_group(j, ue8m0_value((u32)vs.ref[j]));
  }
}

SMLA_DEVICE float sink_log2(const DecodeParams& p, int head) {
  if (!kHasSink || head >= kNumHeads) return neg_inf();
  return __fmul_rn(p.sink[head], kLog2e);
}

// Whether a CTA may walk several segments (whole rows, prefix items), folding each into a total.
constexpr bool kFolds = kGeo.segments > 1;

SMLA_DEVICE WorkItem work_item(const DecodeParams& p) {
  WorkItem w;
  w.item = blockIdx.x + (i64)blockIdx.y * gridDim.x;
  w.head_group = (int)(blockIdx.x % kHeadGroups);
  const int rest = (int)(blockIdx.x / kHeadGroups);
  if (p.split) {
    const bool prefix = p.prefix_segments > 1;
    const int k = prefix ? (int)blockIdx.y : rest % kGeo.segments;
    w.row = prefix ? rest : rest / kGeo.segments;
    const int first = k == 0 ? 0 : p.prefix_segments - 1 + k;
    const int last = k == 0 ? p.prefix_segments : first + 1;
    w.begin = first * kSegmentTiles;
    w.end = min(last * kSegmentTiles, kGeo.tiles);
  } else {
    w.row = rest;
    w.begin = 0;
    w.end = kGeo.tiles;
  }
  w.base0 = w.base1 = 0;
  i64 pos = 0;  // the row's position in its request, for structured sources
  int request = 0;
  if (kStructured) {
    // The row's request: the last b with cu_seqlens_q[b] <= row. NOTE: the device arrays may
    // change on a graph replay; whatever they hold, b stays in [0, num_requests).
    int lo = 0, hi = p.num_requests - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (__ldg(p.cu_seqlens_q + mid) <= w.row) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    request = lo;
    const i64 start = __ldg(p.cu_seqlens_q + lo), end = __ldg(p.cu_seqlens_q + lo + 1);
    pos = (i64)__ldg(p.kv_lens + lo) - (end - start) + (w.row - start);
  }
  int first = 0;
  w.length0 = source_length<kKind0, kWidth0, kRatio0>(p.sources[0].lengths, w.row, pos, &first);
  if (kKind0 != kKindList) {
    w.length0 = table_span<kPageSize0>(p.sources[0], request, first, w.length0, &w.base0);
  }
  w.length1 = 0;
  if (kNumSources > 1) {
    first = 0;
    w.length1 = source_length<kKind1, kWidth1, kRatio1>(p.sources[1].lengths, w.row, pos, &first);
    if (kKind1 != kKindList) {
      w.length1 = table_span<kPageSize1>(p.sources[1], request, first, w.length1, &w.base1);
    }
  }
  return w;
}

}  // namespace decode
}  // namespace smla
