// The shape of one decode kernel, computed from its specialization: thread count, tile and
// segment counts, and the shared-memory map. The kernel and the host scheduler both include
// this, so the launch configuration and the workspace size are defined in one place.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define SMLA_HOST_DEVICE __host__ __device__
#else
#define SMLA_HOST_DEVICE
#endif

namespace smla {

constexpr int kHeadDim = 512;
constexpr int kLayoutUniform = 0;  // smla_kv_layout values
constexpr int kLayoutPacked = 1;
constexpr int kLayoutBf16 = 2;

struct DecodeShape {
  int heads_per_cta;  // 8, 16 or 32 (entries on M); 16 or 32 (heads on M)
  int warps;          // entries on M: (tile_entries / 16) entry blocks x 2 or 4 parts of the
                      // dims; heads on M: tile_entries / 8
  int tile_entries;   // KV entries per pipeline stage: 16 per entry block
  int stages;         // pipeline depth
  int segment_tiles;  // tiles per segment (the batch-invariant fold unit)
  int layout;
  int num_sources;
  int width0;
  int width1;
  bool heads_on_m;  // the mma_sync_hm template (decode_heads_m_kernel.cuh)
  bool wgmma;       // the wgmma template (decode_wgmma_kernel.cuh)
  bool q_fp8;
  bool want_lse;
  bool e4m3_scores;  // Q K^T as e4m3 products (the key's qk field)
};

// The wgmma kernel with e4m3 scores multiplies Q K^T straight from the gathered stage, so the
// stage is laid out as the products' operand (decode_wgmma_kernel.cuh).
SMLA_HOST_DEVICE constexpr bool e4m3_operand_stages(const DecodeShape& s) {
  return s.wgmma && s.e4m3_scores;
}

// Which of a thread's score values it sums and exponentiates. The parts of an entry block hold
// partial scores of the same 2 rows x (heads_per_cta / 4) columns per thread; part p owns the
// values p, p + parts, p + 2 * parts, ... of the row-major order. When the columns divide among
// the parts, an owner holds both rows of its columns and reduces them before the slots.
struct ScoreOwnership {
  bool both_rows;
  int row_slots;           // max slots per head and entry block: 1 when the owner holds both rows
  int slots_per_head;      // of the per-head maxima in shared memory
  int sum_slots_per_head;  // of the per-head sums: at most one per entry block and row
};

SMLA_HOST_DEVICE constexpr ScoreOwnership score_ownership(const DecodeShape& s) {
  const int entry_blocks = s.tile_entries / 16;
  const int parts = s.warps / entry_blocks;
  const int columns = s.heads_per_cta / 4;
  ScoreOwnership o{};
  o.both_rows = columns % parts == 0;
  o.row_slots = o.both_rows ? 1 : 2;
  o.slots_per_head = entry_blocks * o.row_slots;
  o.sum_slots_per_head = entry_blocks * 2;
  return o;
}

struct DecodeGeometry {
  int threads;
  int tiles0, tiles1, tiles, segments;
  int entry_bytes;       // shared-memory stride of one raw entry
  int chunks_per_entry;  // 16-byte chunks copied per entry
  int query_stride;      // bytes per head row of the 16-bit query tile
  int prob_stride;       // 16-bit values per head row of the probabilities
  int pv_groups;         // scaled 64-dim groups of a warp's value dims (packed layout)
  // Byte offsets into dynamic shared memory.
  int raw_offset, scale_offset, query_offset, query_factor_offset, prob_offset, rope_prob_offset,
      value_factor_offset, total_offset, exchange_offset, reduce_offset, fold_offset, valid_offset,
      keys_offset, smem_bytes;
};

SMLA_HOST_DEVICE constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }
SMLA_HOST_DEVICE constexpr int align_up(int a, int b) { return ceil_div(a, b) * b; }

// The 64-dim groups of a warp's value dims (1 when a warp takes part of one group).
SMLA_HOST_DEVICE constexpr int warp_value_groups(const DecodeShape& s) {
  return kHeadDim / s.warps > 64 ? kHeadDim / s.warps / 64 : 1;
}

// Whether the folded total (whole rows, prefix items) lives in shared memory: for the fp8 layouts
// with several segments, whose conversions need its registers.
SMLA_HOST_DEVICE constexpr bool total_in_smem(const DecodeShape& s, int segments) {
  return s.layout != kLayoutBf16 && segments > 1;
}

// What every kernel's map has: the counts, and the raw ring's entry stride and copies.
SMLA_HOST_DEVICE constexpr void geometry_counts(const DecodeShape& s, DecodeGeometry& g) {
  const bool packed = s.layout == kLayoutPacked;
  const bool bf16 = s.layout == kLayoutBf16;
  g.threads = s.warps * 32;
  g.tiles0 = ceil_div(s.width0, s.tile_entries);
  g.tiles1 = s.num_sources > 1 ? ceil_div(s.width1, s.tile_entries) : 0;
  g.tiles = g.tiles0 + g.tiles1;
  g.segments = ceil_div(g.tiles, s.segment_tiles);
  // fp8 entries are 36 chunks (rows 16 words apart) with the chunk index swizzled by the entry
  // (decode_common.cuh: stored_chunk), so ldmatrix rows and 16-byte reads meet no conflict.
  g.entry_bytes = bf16 ? 1024 : 576;
  g.chunks_per_entry = (packed ? 576 : bf16 ? 1024 : 512) / 16;
}

// What both mma.sync kernels' maps share: the counts, the strides, and the shared memory up to
// the packed value factors. Returns the offset where the rest of the map starts.
SMLA_HOST_DEVICE constexpr int common_geometry(const DecodeShape& s, DecodeGeometry& g) {
  const bool packed = s.layout == kLayoutPacked;
  const bool bf16 = s.layout == kLayoutBf16;
  geometry_counts(s, g);
  g.query_stride = kHeadDim * 2 + 16;  // a 16-byte pad keeps eight head rows in distinct banks
  g.prob_stride = s.tile_entries + 8;  // the same for eight rows of P
  g.pv_groups = packed ? warp_value_groups(s) : 0;
  const int prob_bytes = align_up(s.heads_per_cta * g.prob_stride * 2, 16);
  int offset = 0;
  g.raw_offset = offset;
  offset += s.stages * s.tile_entries * g.entry_bytes;
  g.scale_offset = offset;
  offset += packed ? s.stages * s.tile_entries * 8 : 0;
  g.query_offset = offset;
  offset += s.heads_per_cta * g.query_stride;
  g.query_factor_offset = offset;  // per head: the score factor (fp8 layouts)
  offset += bf16 ? 0 : s.heads_per_cta * 4;
  g.prob_offset = offset;  // f16 for the fp8 layouts, bf16 for the bf16 layout
  offset += prob_bytes;
  g.rope_prob_offset = offset;  // packed: a bf16 copy for the bf16 rope dims
  offset += packed ? prob_bytes : 0;
  g.value_factor_offset = offset;  // packed: per warp and group, f16 2^(scale - reference)
  offset += align_up(s.warps * g.pv_groups * s.tile_entries * 2, 16);
  return offset;
}

// The heads-on-M kernel's map (decode_heads_m_kernel.cuh): the folded total is in
// registers; the reduce area holds per head one max and one sum slot per warp.
SMLA_HOST_DEVICE constexpr DecodeGeometry heads_m_geometry(const DecodeShape& s) {
  DecodeGeometry g{};
  int offset = common_geometry(s, g);
  g.exchange_offset = offset;  // the parts' partial scores: per head and entry, one float
  offset += s.heads_per_cta * s.tile_entries * 4;
  g.total_offset = g.fold_offset = offset;  // unused
  g.reduce_offset = offset;
  offset += s.heads_per_cta * 2 * s.warps * 4;
  g.valid_offset = offset;
  offset += s.stages * s.tile_entries;
  g.smem_bytes = align_up(offset, 16);
  return g;
}

// The wgmma kernel's map (decode_wgmma_kernel.cuh), from a 1024-byte aligned base the kernel
// finds at run time (the 128-byte swizzle works on address bits). The products' operands come
// first: the query (bf16; e4m3 with e4m3_operand_stages), the tile's keys dequantized to
// bf16 (one buffer: the values of P V too; f16 values only with e4m3_operand_stages), P; then the
// raw ring of the gather (itself an operand with e4m3_operand_stages: 64-entry blocks of
// 128-byte rows), and per head the tile's rescale factor, the (max, sum) and a fold's two
// factors. The room to align the base comes last.
SMLA_HOST_DEVICE constexpr DecodeGeometry wgmma_geometry(const DecodeShape& s) {
  DecodeGeometry g{};
  geometry_counts(s, g);
  const bool e4m3 = e4m3_operand_stages(s);
  if (e4m3) g.entry_bytes = kHeadDim;  // a stage is 4 column blocks of tile_entries x 128 bytes
  int offset = 0;
  g.query_offset = offset;
  offset += s.heads_per_cta * kHeadDim * (e4m3 ? 1 : 2);
  g.keys_offset = offset;
  offset += s.tile_entries * kHeadDim * 2;
  g.prob_offset = offset;
  offset += s.heads_per_cta * s.tile_entries * 2;
  g.raw_offset = offset;
  offset += s.stages * s.tile_entries * g.entry_bytes;
  g.scale_offset = offset;
  offset += s.layout == kLayoutPacked ? s.stages * s.tile_entries * 8 : 0;
  g.reduce_offset = offset;
  offset += s.heads_per_cta * 5 * 4;
  g.valid_offset = offset;
  offset += s.stages * s.tile_entries;
  offset += 1024;  // room to align the base
  g.smem_bytes = align_up(offset, 16);
  return g;
}

SMLA_HOST_DEVICE constexpr DecodeGeometry decode_geometry(const DecodeShape& s) {
  if (s.wgmma) return wgmma_geometry(s);
  if (s.heads_on_m) return heads_m_geometry(s);
  DecodeGeometry g{};
  const int values_per_thread = s.heads_per_cta / 2;  // 2 rows x heads / 4 columns
  int offset = common_geometry(s, g);
  g.total_offset = offset;  // the folded output, when total_in_smem
  offset += total_in_smem(s, g.segments) ? s.heads_per_cta * kHeadDim * 4 : 0;
  g.exchange_offset = offset;  // every warp's partial scores
  offset += s.warps * values_per_thread * 32 * 4;
  g.reduce_offset = offset;  // per head and slot: the tile's maxima, then a segment's sums
  offset += s.heads_per_cta *
            (score_ownership(s).slots_per_head + score_ownership(s).sum_slots_per_head) * 4;
  g.fold_offset = offset;  // the folded (max, sum) per head, two buffers
  offset += 2 * s.heads_per_cta * 2 * 4;
  g.valid_offset = offset;
  offset += s.stages * s.tile_entries;
  g.smem_bytes = align_up(offset, 16);
  return g;
}

// The combine kernel's CTA (one per row and head): each thread folds `dims` dims over all
// segments, loading a batch of `batch` segments' partials at once (one round trip to L2 each).
// NOTE: rows of up to 16 segments (every batch-invariant default) take 4 dims a thread and one
// batch; more segments take 2 dims a thread, so that up to 40 segments' loads fit the
// registers of one batch. The dims a thread takes do not change the fold's order, so a row's
// bits do not depend on it.
struct CombineShape {
  int dims, threads, batch;
};
SMLA_HOST_DEVICE constexpr CombineShape combine_shape(int segments) {
  const int dims = segments <= 16 ? 4 : 2;
  return {dims, kHeadDim / dims, segments < 40 ? segments : 40};
}

// Workspace floats of one split item (one row, segment and head group): values, then (max, sum).
SMLA_HOST_DEVICE constexpr long long partial_item_floats(int heads_per_cta) {
  return (long long)heads_per_cta * (kHeadDim + 2);
}

}  // namespace smla
