// The combine kernel of split mode: for one (row, head), folds the segment partials the decode
// kernel wrote to the workspace (partial_fold.cuh) and writes bf16 out and the lse. One CTA of 128
// threads per (row, head); a thread owns 4 dims.
//
// The generated prologue defines namespace smla::cfg: kNumHeads, kHeadsPerCta, kSegments,
// kHasSink, kWantLse.
#pragma once

#include "decode_geometry.cuh"
#include "decode_params.cuh"
#include "partial_fold.cuh"
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

  // Item (row, segment, group), as the decode kernel numbers its split CTAs; this head's slot.
  const auto slot = [&](int segment) {
    const long long item = ((long long)row * kSegments + segment) * kHeadGroups + group;
    return item * kHeadsPerCta + local;
  };
  fold_partials<kSegments, kNumHeads, kHasSink, kWantLse>(
      p, row, head, d, [&](int segment, float2& ml, float4& v) {
        ml = *(const float2*)(p.partial_ml + slot(segment) * 2);
        v = *(const float4*)(p.partial_out + slot(segment) * kHeadDim + d);
      });
}
