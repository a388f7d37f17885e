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
  int heads_per_cta;   // 16 or 32: the M of the score MMA is heads
  int warps;           // each gathers tile_entries / warps entries and owns 512 / warps dims
  int tile_entries;    // KV entries per pipeline stage (multiple of 16)
  int stages;          // pipeline depth
  int segment_tiles;   // tiles per segment (the batch-invariant fold unit)
  int layout;
  int num_sources;
  int width0;
  int width1;
};

struct DecodeGeometry {
  int threads;
  int tiles0, tiles1, tiles, segments;
  int entry_bytes;      // shared-memory stride of one raw entry
  int chunks_per_entry; // 16-byte chunks copied per entry
  int score_stride;     // floats per head row of a warp's partial scores
  int prob_stride;      // bf16 per head row of the probabilities
  // Byte offsets into dynamic shared memory.
  int raw_offset, scale_offset, value_offset, score_offset, prob_offset, head_offset,
      total_offset, valid_offset, smem_bytes;
  // Whole-row mode folds segments into a running total: in registers for 16 heads per CTA, in
  // shared memory for 32 (their registers are spent on the accumulators).
  bool total_in_smem;
};

SMLA_HOST_DEVICE constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }
SMLA_HOST_DEVICE constexpr int align_up(int a, int b) { return ceil_div(a, b) * b; }

SMLA_HOST_DEVICE constexpr DecodeGeometry decode_geometry(const DecodeShape& s) {
  DecodeGeometry g{};
  const bool packed = s.layout == kLayoutPacked;
  const bool bf16 = s.layout == kLayoutBf16;
  g.threads = s.warps * 32;
  g.tiles0 = ceil_div(s.width0, s.tile_entries);
  g.tiles1 = s.num_sources > 1 ? ceil_div(s.width1, s.tile_entries) : 0;
  g.tiles = g.tiles0 + g.tiles1;
  g.segments = ceil_div(g.tiles, s.segment_tiles);
  g.entry_bytes = bf16 ? 1024 : 576;  // 576 = 36 chunks: rows 16 words apart, conflict-free
  g.chunks_per_entry = (packed ? 576 : bf16 ? 1024 : 512) / 16;
  g.score_stride = s.tile_entries + 8;
  g.prob_stride = s.tile_entries + 8;
  int offset = 0;
  g.raw_offset = offset;
  offset += s.stages * s.tile_entries * g.entry_bytes;
  g.scale_offset = offset;
  offset += packed ? s.stages * s.tile_entries * 8 : 0;
  g.value_offset = offset;  // the dequantized bf16 tile the value product reads (fp8 layouts)
  offset += bf16 ? 0 : s.tile_entries * kHeadDim * 2;
  g.score_offset = offset;
  offset += s.warps * s.heads_per_cta * g.score_stride * 4;
  g.prob_offset = offset;
  offset += align_up(s.heads_per_cta * g.prob_stride * 2, 16);
  g.head_offset = offset;  // per head: rescale factor, fold step (mode, a, b), output factor
  offset += s.heads_per_cta * 5 * 4;
  offset = align_up(offset, 16);
  g.total_in_smem = s.heads_per_cta > 16;
  g.total_offset = offset;
  offset += g.total_in_smem ? s.heads_per_cta * kHeadDim * 4 : 0;
  g.valid_offset = offset;
  offset += s.stages * s.tile_entries;
  g.smem_bytes = align_up(offset, 16);
  return g;
}

// Workspace floats of one split item (one row, segment and head group): values, then (max, sum).
SMLA_HOST_DEVICE constexpr long long partial_item_floats(int heads_per_cta) {
  return (long long)heads_per_cta * (kHeadDim + 2);
}

}  // namespace smla
