// The combine kernel of split mode: for one (row, head), folds the partials of the row's items
// that the decode kernel wrote, left to right, with the same operations the decode kernel uses in
// whole-row mode (segment_fold.cuh), and writes bf16 out and the lse. One CTA per (row, head); a
// thread owns 4 or 2 dims (combine_shape). Two kernels: smla_combine for plain splits,
// smla_combine_prefix for prefix calls.
//
// The generated prologue defines namespace smla::cfg: kNumHeads, kHeadsPerCta, kSegments,
// kHasSink, kWantLse.
#pragma once

#include "decode_geometry.cuh"
#include "decode_params.cuh"
#include "segment_fold.cuh"
#include "smla_device.cuh"

constexpr smla::CombineShape kCombine = smla::combine_shape(smla::cfg::kSegments);
constexpr int kHeadGroups =
    (smla::cfg::kNumHeads + smla::cfg::kHeadsPerCta - 1) / smla::cfg::kHeadsPerCta;

// The running (max, sum) and this thread's dims of the total, folded over the row's items.
template <int kDims>
struct CombineTotal {
  float max = smla::neg_inf(), sum = 0.0f;
  float values[kDims] = {};
};

// Folds the items of (row, group)'s head `local` into `t`. The row's items (work_item in
// decode_common.cuh): the first folds p.prefix_segments segments, each other one segment; their
// CTAs are (k, row, group) with prefix items (kPrefix), else (row, k, group).
// NOTE: every (max, sum) and value of a batch of items is loaded at once, so a row costs one
// round trip to L2 per batch (combine_shape). An item with max -inf wrote no values: those
// loads read stale workspace bytes, which the fold never uses (fold_state keeps the total).
// The folds stay in segment order. Without prefix items the item count and slots are
// constants (a runtime count is 2% slower at one row of 16 heads: 10.38 against 10.16 us).
// A prefix item's total seeds the row's total as it is: folding it into the empty total,
// fma(+0, 0, T), would turn a total of exactly -0 into +0 where the whole-row CTA carries -0 on.
// An empty prefix (max -inf) wrote no values and seeds nothing.
template <bool kPrefix>
SMLA_DEVICE void fold_items(const smla::DecodeParams& p, int row, int group, int local, int d,
                            CombineTotal<kCombine.dims>& t) {
  using namespace smla;
  using namespace smla::cfg;
  constexpr int kDims = kCombine.dims;
  constexpr int kBatch = kCombine.batch;
  const int items = kPrefix ? kSegments - p.prefix_segments + 1 : kSegments;
  const auto slot = [&](int k) {
    const long long cta = kPrefix ? ((long long)k * p.num_rows + row) * kHeadGroups + group
                                  : ((long long)row * kSegments + k) * kHeadGroups + group;
    return cta * kHeadsPerCta + local;
  };
  for (int first = 0; first < kSegments; first += kBatch) {
    float2 ml[kBatch];
    float v[kBatch][kDims];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      if (first + b < items) {
        ml[b] = *(const float2*)(p.partial_ml + slot(first + b) * 2);
        const float* from = p.partial_out + slot(first + b) * kHeadDim + d;
        if constexpr (kDims == 4) {
          const float4 four = *(const float4*)from;
          v[b][0] = four.x, v[b][1] = four.y, v[b][2] = four.z, v[b][3] = four.w;
        } else {
          const float2 two = *(const float2*)from;
          v[b][0] = two.x, v[b][1] = two.y;
        }
      }
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      if (first + b >= items) break;
      if (kPrefix && first + b == 0) {
        if (ml[b].x == neg_inf()) continue;
        t.max = ml[b].x, t.sum = ml[b].y;
#pragma unroll
        for (int i = 0; i < kDims; ++i) t.values[i] = v[b][i];
        continue;
      }
      const FoldStep step = fold_state(t.max, t.sum, ml[b].x, ml[b].y);
      if (step.keeps()) continue;
#pragma unroll
      for (int i = 0; i < kDims; ++i) t.values[i] = fold_value(t.values[i], v[b][i], step);
    }
  }
}

// One (row, head): folds its items and writes out and the lse.
template <bool kPrefix>
SMLA_DEVICE void combine_row_head(const smla::DecodeParams& p) {
  using namespace smla;
  using namespace smla::cfg;
  constexpr int kDims = kCombine.dims;
  const int row = blockIdx.x / kNumHeads;
  const int head = blockIdx.x % kNumHeads;
  const int group = head / kHeadsPerCta;
  const int local = head % kHeadsPerCta;
  const int d = kDims * threadIdx.x;
  // Launched while the decode grid runs (programmatic dependent launch): wait for its partials.
  wait_for_prerequisites();

  CombineTotal<kDims> t;
  fold_items<kPrefix>(p, row, group, local, d, t);
  const float sink_log2 = kHasSink ? __fmul_rn(p.sink[head], kLog2e) : neg_inf();
  const float factor = output_factor(t.max, t.sum, sink_log2, p.out_scale);
  u16* out =
      (u16*)p.out + (long long)row * p.out_row_stride + (long long)head * p.out_head_stride + d;
  u32 packed[kDims / 2];
#pragma unroll
  for (int i = 0; i < kDims / 2; ++i) {
    packed[i] =
        pack_bf16x2(__fmul_rn(t.values[2 * i], factor), __fmul_rn(t.values[2 * i + 1], factor));
  }
  if constexpr (kDims == 4) {
    *(uint2*)out = make_uint2(packed[0], packed[1]);
  } else {
    *(u32*)out = packed[0];
  }
  if (kWantLse && threadIdx.x == 0)
    p.lse[(long long)row * kNumHeads + head] = row_lse(t.max, t.sum);
}

// NOTE: plain splits and prefix calls (DecodeParams::prefix_segments > 1) launch kernels of
// their own: one kernel choosing between both folds at run time makes a 1-row call of 16 heads
// 3% slower on an H100 (8.33 against 8.09 us).
extern "C" __global__ void __launch_bounds__(kCombine.threads)
    smla_combine(const __grid_constant__ smla::DecodeParams p) {
  combine_row_head<false>(p);
}

extern "C" __global__ void __launch_bounds__(kCombine.threads)
    smla_combine_prefix(const __grid_constant__ smla::DecodeParams p) {
  combine_row_head<true>(p);
}
