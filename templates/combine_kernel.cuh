// The combine kernel of split mode: for one (row, head), folds the partials of the row's items
// that the decode kernel wrote, left to right, with the same operations the decode kernel uses in
// whole-row mode (segment_fold.cuh), and writes bf16 out and the lse. One CTA per (row, head); a
// thread owns 4 or 2 dims (combine_shape).
//
// The generated prologue defines namespace smla::cfg: kNumHeads, kHeadsPerCta, kSegments,
// kHasSink, kWantLse.
#pragma once

#include "decode_geometry.cuh"
#include "decode_params.cuh"
#include "segment_fold.cuh"
#include "smla_device.cuh"

constexpr smla::CombineShape kCombine = smla::combine_shape(smla::cfg::kSegments);

extern "C" __global__ void __launch_bounds__(kCombine.threads)
    smla_combine(const __grid_constant__ smla::DecodeParams p) {
  using namespace smla;
  using namespace smla::cfg;
  constexpr int kHeadGroups = (kNumHeads + kHeadsPerCta - 1) / kHeadsPerCta;
  constexpr int kDims = kCombine.dims;
  constexpr int kBatch = kCombine.batch;
  const int row = blockIdx.x / kNumHeads;
  const int head = blockIdx.x % kNumHeads;
  const int group = head / kHeadsPerCta;
  const int local = head % kHeadsPerCta;
  const int d = kDims * threadIdx.x;
  // Launched while the decode grid runs (programmatic dependent launch): wait for its partials.
  wait_for_prerequisites();

  // NOTE: every (max, sum) and value of a batch of segments is loaded at once, so a row costs
  // one round trip to L2 per batch (combine_shape). A segment with max -inf wrote no values:
  // those loads read stale workspace bytes, which the fold never uses (fold_state keeps the
  // total). The folds stay in segment order.
  // The row's items (work_item in decode_common.cuh): the first folds p.prefix_segments
  // segments, each other one segment. This head's slot of item k, in the order of their CTAs.
  const bool prefix = p.prefix_segments > 1;
  const int items = kSegments - p.prefix_segments + 1;
  const auto slot = [&](int k) {
    const long long cta = prefix ? ((long long)k * p.num_rows + row) * kHeadGroups + group
                                 : ((long long)row * kSegments + k) * kHeadGroups + group;
    return cta * kHeadsPerCta + local;
  };
  float total_max = neg_inf(), total_sum = 0.0f;
  float total[kDims] = {};
  // NOTE: bounded by kSegments, so that the loop unrolls as without prefix items (a bound of
  // `items` measured 5% slower at one row of 16 heads).
#pragma unroll
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
      const FoldStep step = fold_state(total_max, total_sum, ml[b].x, ml[b].y);
      if (step.keeps()) continue;
#pragma unroll
      for (int i = 0; i < kDims; ++i) total[i] = fold_value(total[i], v[b][i], step);
    }
  }
  const float sink_log2 = kHasSink ? __fmul_rn(p.sink[head], kLog2e) : neg_inf();
  const float factor = output_factor(total_max, total_sum, sink_log2, p.out_scale);
  u16* out =
      (u16*)p.out + (long long)row * p.out_row_stride + (long long)head * p.out_head_stride + d;
  u32 packed[kDims / 2];
#pragma unroll
  for (int i = 0; i < kDims / 2; ++i) {
    packed[i] = pack_bf16x2(__fmul_rn(total[2 * i], factor), __fmul_rn(total[2 * i + 1], factor));
  }
  if constexpr (kDims == 4) {
    *(uint2*)out = make_uint2(packed[0], packed[1]);
  } else {
    *(u32*)out = packed[0];
  }
  if (kWantLse && threadIdx.x == 0)
    p.lse[(long long)row * kNumHeads + head] = row_lse(total_max, total_sum);
}
