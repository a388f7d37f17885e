// The wgmma decode kernel (tile path wgmma, sm_90a only): the problem and outputs of
// decode_kernel.cuh with 64 heads per CTA the M of Hopper's warpgroup MMAs. Whole rows only (one
// segment), so calls never split and a row's bits never depend on its batch.
// Design and measurements: docs/decode-kernel.md.
//
// Three warpgroups, over two bf16 key buffers (64 entries each) guarded by mbarriers:
// - warpgroup 2, the producer, loads each tile's entries from global memory into registers,
//   dequantizes them (e4m3 times its ue8m0 scale is exact in bf16; the packed rope is copied)
//   into a free buffer in the 128-byte swizzle and marks it filled, up to two tiles ahead;
// - warpgroup 0 computes S = Q K^T (64 heads x 64 entries over 32 k-steps, both operands in
//   shared memory) and the online softmax per head, keeps P in bf16 registers and stores P and
//   each head's rescale factor in shared memory for warpgroup 1;
// - each of warpgroups 0 and 1 accumulates O = P V over 256 of the 512 dims, V being the same
//   bf16 buffer read MN-major, and marks the buffer emptied.
// At 128 heads the row's two CTAs form a cluster: each producer dequantizes half of every tile
// into the buffers of both (distributed shared memory; mbarriers at cluster scope).
// NOTE: the dequantization was a third of the tile's chain when every thread did it between
// the products (docs/decode-kernel.md); a producer of its own takes it off the chain.
//
// The generated prologue defines namespace smla::cfg (see codegen/kernel_source.cpp).
#pragma once

#include "decode_common.cuh"
#include "wgmma.cuh"

namespace smla {
namespace decode {

static_assert(kWgmma, "the wgmma template");
static_assert(kHeadsPerCta == 64 && kWarps == 12 && kTileEntries == 64 && kStages == 2,
              "64 heads per CTA, three warpgroups, 64-entry tiles, two key buffers");
static_assert(!kBf16Kv, "the fp8 layouts");
static_assert(kGeo.segments == 1, "whole rows");

constexpr u32 kBlockBytes = 64 * 128;  // 64 rows x 64 bf16 values: one column block of an operand
constexpr int kRawChunks = kGeo.chunks_per_entry;  // 16-byte chunks of a raw entry: 36 or 32
constexpr int kPvBlocks = 4;                       // 64-dim blocks of a warpgroup's 256 value dims
constexpr u32 kKeysBytes = kTileEntries * kHeadDim * 2;  // one bf16 key buffer
constexpr int kConsumerThreads = 256;                    // warpgroups 0 and 1
constexpr int kClusterCtas = decode_cluster_ctas(kShape, kNumHeads);
constexpr bool kCluster = kClusterCtas == 2;
// The producer: 4 threads per entry (lane / 8 picks the chunks), 32 entries a round.
constexpr int kRounds = kTileEntries / 32;
// NOTE: registers per thread of each warpgroup (setmaxnreg; the launch gives 168 each, and the
// three may not pass 3 x 168): warpgroup 0 holds S, P and half of O, warpgroup 1 half of O, the
// producer a tile's raw chunks.
constexpr int kScoreRegisters = 200, kValueRegisters = 160, kProducerRegisters = 144;
static_assert(kScoreRegisters + kValueRegisters + kProducerRegisters <= 3 * 168, "the budget");
// Named barriers between warpgroups 0 and 1 (0 is __syncthreads).
constexpr int kProbsReady = 1, kProbsFree = 2, kStatsReady = 3;

// Where value (row, dim) of a bf16 operand of 64 rows sits: column blocks of 64 dims, rows of
// 128 bytes, chunk i of row r at chunk i ^ (r % 8) (the swizzle the descriptors name).
SMLA_DEVICE u32 swizzled(int row, int dim) {
  return (dim >> 6) * kBlockBytes + row * 128 + ((((dim >> 3) & 7) ^ (row & 7)) << 4) +
         (dim & 7) * 2;
}

// bf16x2 holding 2^k twice, for k in [-126, 127].
SMLA_DEVICE u32 bf16x2_pow2(int k) {
  const u32 half = (u32)(k + 127) << 7;
  return half | (half << 16);
}

// The CTA's 64 query heads in bf16 (fp8 q converted exactly; its scale is in the score factor).
// Heads past kNumHeads are zero: their rows are computed and never stored.
SMLA_DEVICE void load_query(const DecodeParams& p, unsigned char* query, int row, int head_group) {
  for (int i = threadIdx.x; i < kHeadsPerCta * 64; i += kThreads) {
    const int h = i / 64, chunk = i % 64;  // 8 dims per chunk
    const int head = head_group * kHeadsPerCta + h;
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (head < kNumHeads) {
      const i64 offset = (i64)row * p.q_row_stride + (i64)head * p.q_head_stride + chunk * 8;
      if (kQFp8) {
        const uint2 x = *(const uint2*)((const u8*)p.q + offset);
        e4m3x4_to_bf16x2(x.x, v.x, v.y);
        e4m3x4_to_bf16x2(x.y, v.z, v.w);
      } else {
        v = *(const uint4*)((const u16*)p.q + offset);
      }
    }
    *(uint4*)(query + swizzled(h, chunk * 8)) = v;
  }
}

// The producer's share of one entry: its raw 16-byte chunks quarter + 4j (j = 0, 1, ...) and the
// entry's packed scale bytes; zero for an invalid entry, whose memory is never read.
struct RawShare {
  uint4 chunk[kRawChunks / 4];
  uint2 scales;
};

// The walk position's entry `e` of this row: its index, or -1 where the entry is invalid.
SMLA_DEVICE int tile_entry_index(const DecodeParams& p, const WorkItem& w, int tile, int e) {
  const bool first = tile < kGeo.tiles0;
  const SourceParams& src = p.sources[first ? 0 : 1];
  const int column = (first ? tile : tile - kGeo.tiles0) * kTileEntries + e;
  if (column >= (first ? w.length0 : w.length1)) return -1;
  const int index = __ldg(src.indices + (i64)w.row * src.index_row_stride + column);
  return index >= 0 && (i64)index < src.index_limit ? index : -1;
}

template <int kSource, int kPageSize>
SMLA_DEVICE void load_source_share(const DecodeParams& p, int index, u32 quarter, RawShare& r) {
  const SourceParams& src = p.sources[kSource];
  constexpr int kTokenBytes = kPacked ? 576 : 512;
  const unsigned char* page = src.cache + (i64)(index / kPageSize) * src.page_stride_bytes;
  const int slot = index % kPageSize;
  const unsigned char* token = page + slot * kTokenBytes + 16 * quarter;
#pragma unroll
  for (int j = 0; j < kRawChunks / 4; ++j) {
    r.chunk[j] = __ldg((const uint4*)(token + 64 * j));
  }
  if (kPacked) r.scales = __ldg((const uint2*)(page + kPageSize * 576 + slot * 8));
}


SMLA_DEVICE void load_share(const DecodeParams& p, int tile, int index, u32 quarter,
                            RawShare& r) {
  if (index < 0) {
#pragma unroll
    for (int j = 0; j < kRawChunks / 4; ++j) r.chunk[j] = make_uint4(0x38383838u ^ (u32)index, 0x38383838u ^ (u32)j, 0x38383838u, 0x383838u);
    r.scales = make_uint2(0u, 0u);
  } else if (tile < kGeo.tiles0) {
    load_source_share<0, kPageSize0>(p, index, quarter, r);
  } else {
    load_source_share<1, kPageSize1>(p, index, quarter, r);
  }
}

// A share to the entry's 128-byte rows at `row` of a key buffer. Chunk quarter + 4j is dims
// 64j + 16 quarter .. + 15: 8-dim chunks 2 quarter (`low`) and 2 quarter + 1 (`high`) of column
// block j, swizzled. e4m3 becomes bf16 times 2^-120 exactly, then times 2^(s - 7) for the packed
// scale byte s of group j (2^120 for the uniform layout); bf16 holds factors up to 2^127, so
// with kTwoSteps bytes above 134 take a second factor.
template <bool kTwoSteps>
SMLA_DEVICE void store_share(const RawShare& r, unsigned char* row, u32 peer_row, u32 low,
                             u32 high, u32 rope) {
  // A 16-byte chunk at `offset` of the entry's rows, here and (kCluster) in the other CTA.
  auto put = [&](u32 offset, uint4 v) {
    *(uint4*)(row + offset) = v;
    if (kCluster) cluster_store(peer_row + offset, v);
  };
  const u32 scale_words[2] = {r.scales.x, r.scales.y};
#pragma unroll
  for (int j = 0; j < kRawChunks / 4; ++j) {
    const uint4 x = r.chunk[j];
    if (kPacked && j >= kRopeDim0 / 64) {  // bf16 rope dims 448 + 32 (j - 7) + 8 quarter, as stored
      put(7 * kBlockBytes + ((rope ^ (4 * (j - 7))) << 4), x);
      continue;
    }
    const int exponent = kPacked ? (int)((scale_words[j / 4] >> (8 * (j % 4))) & 0xffu) - 7 : 120;
    const u32 words[4] = {x.x, x.y, x.z, x.w};
    u32 out[8];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      out[2 * k] = e4m3x2_to_bf16x2_scaled(words[k], kBytes01);
      out[2 * k + 1] = e4m3x2_to_bf16x2_scaled(words[k], kBytes23);
    }
    const u32 factor = bf16x2_pow2(kTwoSteps ? min(exponent, 127) : exponent);
#pragma unroll
    for (int k = 0; k < 8; ++k) out[k] = mul_bf16x2(out[k], factor);
    if (kTwoSteps) {
      const u32 rest = bf16x2_pow2(max(exponent - 127, 0));
#pragma unroll
      for (int k = 0; k < 8; ++k) out[k] = mul_bf16x2(out[k], rest);
    }
    put(j * kBlockBytes + (low << 4), make_uint4(out[0], out[1], out[2], out[3]));
    put(j * kBlockBytes + (high << 4), make_uint4(out[4], out[5], out[6], out[7]));
  }
}

// Entry e's share into a key buffer. Eight consecutive lanes meet eight entries, whose writes
// (the swizzle) miss each other's banks.
SMLA_DEVICE void dequantize_share(const RawShare& r, unsigned char* keys, u32 peer_keys, int e,
                                  u32 quarter) {
  const u32 low = (2 * quarter) ^ (e & 7), high = (2 * quarter + 1) ^ (e & 7);
  const u32 rope = quarter ^ (e & 7);
  bool large = false;  // a scale byte above 134: not in any cache seen, but allowed
  if (kPacked) {
#pragma unroll
    for (int j = 0; j < kRopeDim0 / 64; ++j) {
      large = large || ((j < 4 ? r.scales.x >> (8 * j) : r.scales.y >> (8 * (j - 4))) & 0xffu) > 134;
    }
  }
  if (large) {
    store_share<true>(r, keys + e * 128, peer_keys + e * 128, low, high, rope);
  } else {
    store_share<false>(r, keys + e * 128, peer_keys + e * 128, low, high, rope);
  }
}

// Warpgroup 2: every tile of the walk into key buffer i % kStages, once the consumers have
// emptied it. Pipelined by rounds (32 entries): a round's loads are issued a round before its
// dequantization, so their latency hides behind the other round's; indices are loaded two
// tiles ahead. (Loading a tile's both rounds and then dequantizing them left the loads' latency
// on the producer's path: 1.4x slower at 128 heads.)
SMLA_DEVICE void produce(const DecodeParams& p, const WorkItem& w, const TileWalk& walk,
                         unsigned char* keys, u8* valid, u32 barriers) {
  static_assert(kRounds == 2, "two rounds a tile");
  const int lane = threadIdx.x % 32;
  const int entry0 = 8 * (threadIdx.x / 32 % 4) + lane % 8;
  const u32 quarter = lane / 8;
  // The tiles of walk positions i, i + 1 and i + 2, and this thread's indices of their rounds.
  int tile = walk.first, next_tile = walk.next(tile);
  int index[2], next_index[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    index[r] = walk.count > 0 ? tile_entry_index(p, w, tile, entry0 + 32 * r) : -1;
    next_index[r] = walk.count > 1 ? tile_entry_index(p, w, next_tile, entry0 + 32 * r) : -1;
  }
  RawShare first, second;  // the two rounds' raw chunks
  load_share(p, tile, index[0], quarter, first);
  for (int i = 0; i < walk.count; ++i) {
    load_share(p, tile, index[1], quarter, second);
    const int later_tile = walk.next(next_tile);
    int later_index[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      later_index[r] = i + 2 < walk.count ? tile_entry_index(p, w, later_tile, entry0 + 32 * r) : -1;
    }
    const int buffer = i % kStages;
    unsigned char* buffer_keys = keys + buffer * kKeysBytes;
    mbarrier_wait<false>(barriers + 16 * buffer + 8, ((i / kStages) & 1) ^ 1);  // emptied
    if (quarter == 0) {
#pragma unroll
      for (int r = 0; r < 2; ++r) valid[buffer * kTileEntries + entry0 + 32 * r] = index[r] >= 0;
    }
    dequantize_share(first, buffer_keys, 0u, entry0, quarter);
    if (i + 1 < walk.count) load_share(p, next_tile, next_index[0], quarter, first);
    dequantize_share(second, buffer_keys, 0u, entry0 + 32, quarter);
    fence_proxy_async();
    mbarrier_arrive<false>(barriers + 16 * buffer);  // filled
    tile = next_tile;
    next_tile = later_tile;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      index[r] = next_index[r];
      next_index[r] = later_index[r];
    }
  }
}

// The producer of a cluster (kCluster: the two head groups of a 128-head row): CTA r takes
// entries 32 r .. 32 r + 31 of every tile into key buffer i % kStages of both CTAs, once the
// consumers of both have emptied it, so a row's entries are loaded and dequantized once. A
// tile's loads are issued while the last tile is dequantized.
// NOTE: each CTA loading the whole tile made the producers' loads cost the consumers ~16% (an
// A/B that zero-filled half of every tile instead of loading it, docs/PERFORMANCE.md).
SMLA_DEVICE void produce_shared(const DecodeParams& p, const WorkItem& w, const TileWalk& walk,
                                unsigned char* keys, u8* valid, u32 barriers) {
  const int lane = threadIdx.x % 32;
  const u32 quarter = lane / 8;
  const int e = 32 * w.head_group + 8 * (threadIdx.x / 32 % 4) + lane % 8;
  const u32 peer = (u32)w.head_group ^ 1u;
  const u32 peer_keys = cluster_address(smem_u32(keys), peer);
  const u32 peer_valid = cluster_address(smem_u32(valid), peer);
  const u32 peer_barriers = cluster_address(barriers, peer);
  int tile = walk.first, next_tile = walk.next(tile);
  int index = walk.count > 0 ? tile_entry_index(p, w, tile, e) : -1;
  int next_index = walk.count > 1 ? tile_entry_index(p, w, next_tile, e) : -1;
  RawShare share, next_share;
  load_share(p, tile, index, quarter, share);
  for (int i = 0; i < walk.count; ++i) {
    if (i + 1 < walk.count) load_share(p, next_tile, next_index, quarter, next_share);
    const int later_tile = walk.next(next_tile);
    const int later_index = i + 2 < walk.count ? tile_entry_index(p, w, later_tile, e) : -1;
    const int buffer = i % kStages;
    mbarrier_wait<true>(barriers + 16 * buffer + 8, ((i / kStages) & 1) ^ 1);  // emptied
    if (quarter == 0) {
      valid[buffer * kTileEntries + e] = index >= 0;
      cluster_store_byte(peer_valid + buffer * kTileEntries + e, index >= 0 ? 1u : 0u);
    }
    dequantize_share(share, keys + buffer * kKeysBytes, peer_keys + buffer * kKeysBytes, e,
                     quarter);
    fence_proxy_async_all();
    mbarrier_arrive<true>(barriers + 16 * buffer);  // filled, here and there
    cluster_arrive(peer_barriers + 16 * buffer);
    share = next_share;
    tile = next_tile;
    next_tile = later_tile;
    index = next_index;
    next_index = later_index;
  }
}

// Issues S = Q K^T for the CTA's 64 heads and the tile's 64 entries (warpgroup 0) as one group. Accumulator 4j + e
// of a thread holds head 16 warp + g + 8 (e >> 1) and entry 8j + 2c + (e & 1).
SMLA_DEVICE void issue_scores(u32 query, u32 keys, float (&s)[32]) {
  const u64 a = sw128_descriptor(query, 16, 1024), b = sw128_descriptor(keys, 16, 1024);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kHeadDim / 16; ++kk) {
    const u32 offset = (kk / 4) * kBlockBytes + (kk % 4) * 32;
    wgmma_ss<0>(s, advance_descriptor(a, offset), advance_descriptor(b, offset), kk > 0 ? 1 : 0);
  }
  wgmma_commit();
}

struct Lanes {
  int group, warp, g, c;  // warpgroup, warp in it, fragment row group and column pair
  SMLA_DEVICE int head(int half) const { return 16 * warp + g + 8 * half; }
};

// The online softmax of warpgroup 0 over one tile: masks invalid entries, moves each head's
// reference, turns s into P (bf16 A fragments of the 4 k-steps of P V), and rescales the running
// sums. Returns the heads' rescale factors (1 where the reference stays).
// NOTE: the lazy reference of the other kernels (kLazyMargin): a head's reference moves only
// when a score passes it by the margin, so P <= 2^15 (bf16 and the fp32 sums hold it) and most
// tiles rescale nothing: 128 multiplies per thread and tile less.
SMLA_DEVICE void softmax_tile(const Lanes& t, const u8* valid, float factor, float (&s)[32],
                              float (&running_max)[2], float (&sum)[2], u32 (&probs)[4][4],
                              float (&rescale)[2]) {
  float tile_max[2] = {neg_inf(), neg_inf()};
#pragma unroll
  for (int j = 0; j < 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const bool ok = valid[8 * j + 2 * t.c + (e & 1)] != 0;
      s[4 * j + e] = ok ? s[4 * j + e] * factor : neg_inf();
      tile_max[e >> 1] = fmaxf(tile_max[e >> 1], s[4 * j + e]);
    }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float m = quad_max(tile_max[h]);
    const bool raises = running_max[h] == neg_inf() || m > running_max[h] + kLazyMargin;
    rescale[h] = !raises                       ? 1.0f
                 : running_max[h] == neg_inf() ? 0.0f
                                               : exp2_approx(running_max[h] - m);
    if (raises) running_max[h] = m;
  }
  float tile_sum[2] = {0.0f, 0.0f};
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    const float x = s[i];
    s[i] = x == neg_inf() ? 0.0f : exp2_approx(x - running_max[(i >> 1) & 1]);
    tile_sum[(i >> 1) & 1] += s[i];
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) sum[h] = sum[h] * rescale[h] + tile_sum[h];
#pragma unroll
  for (int ks = 0; ks < 4; ++ks)
#pragma unroll
    for (int r = 0; r < 4; ++r)
      probs[ks][r] = pack_bf16x2(s[8 * ks + 2 * r], s[8 * ks + 2 * r + 1]);
}

// Accumulator 4j + e of block nb: head t.head(e >> 1), dim 256 group + 64 nb + 8j + 2c + (e & 1).
SMLA_DEVICE void rescale_values(float (&o)[kPvBlocks][32], const float (&rescale)[2]) {
  // NOTE: most tiles move no maximum; a warp whose heads all keep theirs skips 128 multiplies.
  if (__all_sync(0xffffffffu, rescale[0] == 1.0f && rescale[1] == 1.0f)) return;
#pragma unroll
  for (int nb = 0; nb < kPvBlocks; ++nb)
#pragma unroll
    for (int i = 0; i < 32; ++i) o[nb][i] *= rescale[(i >> 1) & 1];
}

// P's k-step ks fragments at rows (heads) and columns (entries) of a 64 x 64 bf16 operand.
SMLA_DEVICE void store_probabilities(unsigned char* probs_smem, const Lanes& t,
                                     const u32 (&probs)[4][4]) {
#pragma unroll
  for (int ks = 0; ks < 4; ++ks)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int entry = 16 * ks + 8 * (r >> 1) + 2 * t.c;
      *(u32*)(probs_smem + swizzled(t.head(r & 1), entry)) = probs[ks][r];
    }
}

// Warpgroup kGroup (0 or 1): every tile of the walk from the key buffers, then the row's
// outputs. A template, so that each warpgroup's code holds only its own registers.
template <int kGroup>
SMLA_DEVICE void consume(const DecodeParams& p, const WorkItem& w, int count,
                         unsigned char* base, unsigned char* smem, u32 barriers) {
  const unsigned char* query = base + kGeo.query_offset;
  unsigned char* keys = base + kGeo.keys_offset;
  unsigned char* probs_smem = base + kGeo.prob_offset;
  float* rescales = (float*)(smem + kGeo.reduce_offset);  // [head]
  float* stats = rescales + kHeadsPerCta;                 // [head][max, sum]
  Lanes t;
  t.group = kGroup;
  t.warp = threadIdx.x / 32 % 4;
  t.g = threadIdx.x % 32 / 4;
  t.c = threadIdx.x % 4;

  float o[kPvBlocks][32];
#pragma unroll
  for (int nb = 0; nb < kPvBlocks; ++nb)
#pragma unroll
    for (int i = 0; i < 32; ++i) o[nb][i] = 0.0f;
  float running_max[2] = {neg_inf(), neg_inf()}, sum[2] = {0.0f, 0.0f};  // warpgroup 0's
  const u64 probs_a = sw128_descriptor(smem_u32(probs_smem), 16, 1024);
  float s[32];  // warpgroup 0's scores of the tile

  for (int i = 0; i < count; ++i) {
    const int buffer = i % kStages;
    const u32 buffer_keys = smem_u32(keys) + buffer * kKeysBytes;
    const u64 values_b =
        sw128_descriptor(buffer_keys + kGroup * kPvBlocks * kBlockBytes, kBlockBytes, 1024);
    u32 probs[4][4];
    float rescale[2];
    if (kGroup == 0) {
      mbarrier_wait<kCluster>(barriers + 16 * buffer, (i / kStages) & 1);  // filled
      issue_scores(smem_u32(query), buffer_keys, s);
      wgmma_wait<0>();
      pin(s);
      softmax_tile(t, smem + kGeo.valid_offset + buffer * kTileEntries, p.score_scale_log2, s,
                   running_max, sum, probs, rescale);
      if (i > 0) named_barrier_sync(kProbsFree, kConsumerThreads);  // warpgroup 1 read the last
      store_probabilities(probs_smem, t, probs);
      if (t.c == 0) {
        rescales[t.head(0)] = rescale[0];
        rescales[t.head(1)] = rescale[1];
      }
      fence_proxy_async();
      named_barrier_arrive(kProbsReady, kConsumerThreads);
    } else {
      named_barrier_sync(kProbsReady, kConsumerThreads);
      rescale[0] = rescales[t.head(0)];
      rescale[1] = rescales[t.head(1)];
    }
    rescale_values(o, rescale);
    // O += P V: k-step ks is entries 16 ks .. 16 ks + 15, block nb 64 of the group's dims.
    wgmma_fence();
    if (kGroup == 0) {
#pragma unroll
      for (int ks = 0; ks < 4; ++ks)
#pragma unroll
        for (int nb = 0; nb < kPvBlocks; ++nb) {
          wgmma_rs<1>(o[nb], probs[ks],
                      advance_descriptor(values_b, nb * kBlockBytes + ks * 16 * 128));
        }
    } else {
#pragma unroll
      for (int ks = 0; ks < 4; ++ks)
#pragma unroll
        for (int nb = 0; nb < kPvBlocks; ++nb) {
          wgmma_ss<1>(o[nb], advance_descriptor(probs_a, ks * 32),
                      advance_descriptor(values_b, nb * kBlockBytes + ks * 16 * 128), 1);
        }
    }
    wgmma_commit();
    wgmma_wait<0>();
#pragma unroll
    for (int nb = 0; nb < kPvBlocks; ++nb) pin(o[nb]);
    if (threadIdx.x % 32 == 0) {  // emptied, here and (kCluster) there
      mbarrier_arrive<kCluster>(barriers + 16 * buffer + 8);
      if (kCluster) cluster_arrive(cluster_address(barriers, (u32)w.head_group ^ 1u) + 16 * buffer + 8);
    }
    if (kGroup == 1 && i + 1 < count) named_barrier_arrive(kProbsFree, kConsumerThreads);
  }

  if (kGroup == 0) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float total = quad_sum(sum[h]);
      if (t.c == 0) {
        stats[2 * t.head(h)] = running_max[h];
        stats[2 * t.head(h) + 1] = total;
      }
    }
  }
  named_barrier_sync(kStatsReady, kConsumerThreads);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int head = w.head_group * kHeadsPerCta + t.head(h);
    if (head >= kNumHeads) continue;
    const float total_max = stats[2 * t.head(h)], total_sum = stats[2 * t.head(h) + 1];
    const float out_factor = output_factor(total_max, total_sum, sink_log2(p, head), p.out_scale);
    if (kWantLse && kGroup == 0 && t.c == 0) {
      p.lse[(i64)w.row * kNumHeads + head] = row_lse(total_max, total_sum);
    }
    u16* out = (u16*)p.out + (i64)w.row * p.out_row_stride + (i64)head * p.out_head_stride +
               kGroup * kPvBlocks * 64 + 2 * t.c;
#pragma unroll
    for (int nb = 0; nb < kPvBlocks; ++nb)
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const float v0 = __fmul_rn(o[nb][4 * j + 2 * h], out_factor);
        const float v1 = __fmul_rn(o[nb][4 * j + 2 * h + 1], out_factor);
        *(u32*)(out + 64 * nb + 8 * j) = pack_bf16x2(v0, v1);
      }
  }
}

SMLA_DEVICE void run_cta(const DecodeParams& p, unsigned char* smem, const WorkItem& w) {
  // The products' operands start at the first 1024-byte boundary (wgmma_geometry).
  unsigned char* base = smem + ((1024u - (smem_u32(smem) & 1023u)) & 1023u);
  const u32 barriers = smem_u32(smem + kGeo.barrier_offset);  // per buffer: filled, emptied
  if (threadIdx.x == 0) {
    for (int b = 0; b < kStages; ++b) {
      mbarrier_init(barriers + 16 * b, 128 * kClusterCtas);  // the producers' threads
      mbarrier_init(barriers + 16 * b + 8, kConsumerThreads / 32 * kClusterCtas);  // a lane a warp
    }
    if (kCluster) fence_barrier_init();
  }
  load_query(p, base + kGeo.query_offset, w.row, w.head_group);
  fence_proxy_async();
  // The barriers are set (in both CTAs of a cluster) and the query is in place.
  if (kCluster) {
    cluster_sync();
  } else {
    __syncthreads();
  }

  const TileWalk walk = make_walk(w.length0, w.length1, w.begin, w.end);
  // NOTE: a value the compiler knows to be warp-uniform (a broadcast): wgmma in branches on it
  // stays asynchronous, where a branch on threadIdx makes ptxas serialize the products.
  const int group = __shfl_sync(0xffffffffu, (int)threadIdx.x / 128, 0);
  if (group == 2) {
    lower_registers<kProducerRegisters>();
    if (kCluster) {
      produce_shared(p, w, walk, base + kGeo.keys_offset, smem + kGeo.valid_offset, barriers);
    } else {
      produce(p, w, walk, base + kGeo.keys_offset, smem + kGeo.valid_offset, barriers);
    }
  } else if (group == 1) {
    lower_registers<kValueRegisters>();
    consume<1>(p, w, walk.count, base, smem, barriers);
  } else {
    raise_registers<kScoreRegisters>();
    consume<0>(p, w, walk.count, base, smem, barriers);
  }
  // The other CTA stores into this one's buffers and arrives on its barriers until it is done.
  if (kCluster) cluster_sync();
}

}  // namespace decode
}  // namespace smla

#include "decode_entry.cuh"
