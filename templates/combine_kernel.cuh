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

  float total_max = neg_inf(), total_sum = 0.0f;
  float total[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll 4
  for (int segment = 0; segment < kSegments; ++segment) {
    const long long item = ((long long)row * kSegments + segment) * kHeadGroups + group;
    const float* ml = p.partial_ml + (item * kHeadsPerCta + local) * 2;
    const FoldStep step = fold_state(total_max, total_sum, ml[0], ml[1]);
    if (step.keeps()) continue;
    const float4 v = *(const float4*)(p.partial_out + (item * kHeadsPerCta + local) * kHeadDim + d);
    total[0] = fold_value(total[0], v.x, step);
    total[1] = fold_value(total[1], v.y, step);
    total[2] = fold_value(total[2], v.z, step);
    total[3] = fold_value(total[3], v.w, step);
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
