// The combine kernel of split mode: for one (row, head), folds the segment partials the decode
// kernel wrote, left to right, with the same operations the decode kernel uses in whole-row
// mode (segment_fold.cuh), and writes bf16 out and the lse. One CTA of 128 threads per
// (row, head); a thread owns 4 dims.
//
// The generated prologue defines namespace smla::cfg: kNumHeads, kHeadsPerCta, kSegments,
// kHasSink, kWantLse.
#pragma once

#include "decode_geometry.cuh"
#include "decode_params.cuh"
#include "segment_fold.cuh"
#include "smla_device.cuh"

extern "C" __global__ void __launch_bounds__(128)
    smla_combine(const __grid_constant__ smla::DecodeParams p) {
  using namespace smla;
  using namespace smla::cfg;
  constexpr int kHeadGroups = (kNumHeads + kHeadsPerCta - 1) / kHeadsPerCta;
  const int row = blockIdx.x / kNumHeads;
  const int head = blockIdx.x % kNumHeads;
  const int group = head / kHeadsPerCta;
  const int local = head % kHeadsPerCta;
  const int d = 4 * threadIdx.x;
  // Launched while the decode grid runs (programmatic dependent launch): wait for its partials.
  wait_for_prerequisites();

  // NOTE: every (max, sum) and value of a batch of kBatch segments is loaded at once, so a row
  // costs one round trip to L2 per batch (the default segmentations have at most 12 segments:
  // one batch). A segment with max -inf wrote no values: those loads read stale workspace
  // bytes, which the fold never uses (fold_state keeps the total). The folds stay in segment
  // order.
  constexpr int kBatch = kSegments < 16 ? kSegments : 16;
  // Item (row, segment, group), as the decode kernel numbers its split CTAs; this head's slot.
  const auto slot = [&](int segment) {
    const long long item = ((long long)row * kSegments + segment) * kHeadGroups + group;
    return item * kHeadsPerCta + local;
  };
  float total_max = neg_inf(), total_sum = 0.0f;
  float total[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int first = 0; first < kSegments; first += kBatch) {
    float2 ml[kBatch];
    float4 v[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      if (first + b < kSegments) {
        ml[b] = *(const float2*)(p.partial_ml + slot(first + b) * 2);
        v[b] = *(const float4*)(p.partial_out + slot(first + b) * kHeadDim + d);
      }
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      if (first + b >= kSegments) break;
      const FoldStep step = fold_state(total_max, total_sum, ml[b].x, ml[b].y);
      if (step.keeps()) continue;
      total[0] = fold_value(total[0], v[b].x, step);
      total[1] = fold_value(total[1], v[b].y, step);
      total[2] = fold_value(total[2], v[b].z, step);
      total[3] = fold_value(total[3], v[b].w, step);
    }
  }
  const float sink_log2 = kHasSink ? __fmul_rn(p.sink[head], kLog2e) : neg_inf();
  const float factor = output_factor(total_max, total_sum, sink_log2, p.out_scale);
  u16* out =
      (u16*)p.out + (long long)row * p.out_row_stride + (long long)head * p.out_head_stride + d;
  *(uint2*)out = make_uint2(pack_bf16x2(__fmul_rn(total[0], factor), __fmul_rn(total[1], factor)),
                            pack_bf16x2(__fmul_rn(total[2], factor), __fmul_rn(total[3], factor)));
  if (kWantLse && threadIdx.x == 0)
    p.lse[(long long)row * kNumHeads + head] = row_lse(total_max, total_sum);
}
