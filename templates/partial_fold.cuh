// The fold of a split row's segment partials, shared by the combine kernel (partials in the
// workspace) and the decode kernels' cluster mode (partials in the shared memory of the row's
// cluster): for one (row, head) and 4 dims, the segments folded left to right with the
// operations of whole-row mode (segment_fold.cuh), then bf16 out and the lse. The two paths
// differ only in where the partials are loaded from, so a row has the same bits in both.
#pragma once

#include "decode_params.cuh"
#include "segment_fold.cuh"
#include "smla_device.cuh"

namespace smla {

// `load(segment, ml, values)` loads a segment's (max, sum) and its 4 values at dim d. The lse
// is written by the thread of dim 0.
template <int kSegments, int kNumHeads, bool kHasSink, bool kWantLse, typename Load>
SMLA_DEVICE void fold_partials(const DecodeParams& p, int row, int head, int d, Load load) {
  // NOTE: every (max, sum) and value of a batch of kBatch segments is loaded at once, so a row
  // costs one round trip per batch (the default segmentations have at most 12 segments: one
  // batch). A segment with max -inf wrote no values: those loads read stale bytes, which the
  // fold never uses (fold_state keeps the total). The folds stay in segment order.
  constexpr int kBatch = kSegments < 16 ? kSegments : 16;
  float total_max = neg_inf(), total_sum = 0.0f;
  float total[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int first = 0; first < kSegments; first += kBatch) {
    float2 ml[kBatch];
    float4 v[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      if (first + b < kSegments) load(first + b, ml[b], v[b]);
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
  if (kWantLse && d == 0) p.lse[(long long)row * kNumHeads + head] = row_lse(total_max, total_sum);
}

}  // namespace smla
