// How segment results are merged and finished. A row's entries are cut into segments whose size
// depends on the problem only; each segment is reduced from a fresh softmax state, and the
// segments are folded left to right with these functions, whether one CTA walks the whole row,
// each segment ran in its own CTA and the combine kernel folds the partials, or one CTA folded
// the row's first segments (a prefix item) and the combine kernel folds the rest onto that
// total, which it takes over as it is. All paths execute the same operations on the same values,
// so a row's bits do not depend on the split, that is on how many rows share the batch.
#pragma once

#include "smla_device.cuh"

namespace smla {

// total' = total * total_factor + segment * segment_factor; a segment_factor of 0 keeps the
// total as it is (an empty segment, or one too small to count) and never reads the segment.
struct FoldStep {
  float total_factor;
  float segment_factor;
  SMLA_DEVICE bool keeps() const { return segment_factor == 0.0f; }
};

// Folds a segment's (max, sum) into the running (max, sum); returns how to fold its values.
// Maxima are in log2 units. An empty segment (max = -inf) changes nothing, and its values are
// never read (a split CTA with nothing to do does not write them).
SMLA_DEVICE FoldStep fold_state(float& total_max, float& total_sum, float segment_max,
                                float segment_sum) {
  if (segment_max == neg_inf()) return {1.0f, 0.0f};
  if (total_max == neg_inf()) {
    total_max = segment_max;
    total_sum = segment_sum;
    return {0.0f, 1.0f};
  }
  const float new_max = fmaxf(total_max, segment_max);
  const float a = exp2_approx(total_max - new_max);
  const float b = exp2_approx(segment_max - new_max);
  total_sum = __fadd_rn(__fmul_rn(total_sum, a), __fmul_rn(segment_sum, b));
  total_max = new_max;
  return {a, b};
}

// NOTE: one expression for replace and blend (replace has factors 0 and 1) and a select for
// keep: no branch per element, and keep never uses the segment's (unwritten) values.
SMLA_DEVICE float fold_value(float total, float segment, const FoldStep& step) {
  const float folded = __fmaf_rn(total, step.total_factor, __fmul_rn(segment, step.segment_factor));
  return step.keeps() ? total : folded;
}

// The factor that turns a folded value into the output: out_scale / (sum + exp(sink - max));
// 0 for a row with no valid entry (whatever the sink). `sink_log2` is sink * log2(e), or -inf.
SMLA_DEVICE float output_factor(float total_max, float total_sum, float sink_log2,
                                float out_scale) {
  if (total_max == neg_inf()) return 0.0f;
  const float denominator = __fadd_rn(total_sum, exp2_approx(sink_log2 - total_max));
  return __fdiv_rn(out_scale, denominator);
}

// Natural-log sum of exp over the valid entries (no sink); +inf for a row with none.
SMLA_DEVICE float row_lse(float total_max, float total_sum) {
  if (total_max == neg_inf()) return pos_inf();
  return __fmul_rn(__fadd_rn(total_max, log2_approx(total_sum)), kLn2);
}

}  // namespace smla
