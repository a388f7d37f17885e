#include "reference/compare.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "reference/codecs.h"

namespace smla::ref {

bool Comparison::passed(const Tolerance& tolerance) const {
  return nan_count == 0 && empty_row_errors == 0 && out_rel_l2 <= tolerance.out_rel_l2 &&
         lse_max_abs <= tolerance.lse_abs;
}

std::string Comparison::summary() const {
  char text[256];
  std::snprintf(text, sizeof(text),
                "out rel L2 %.3e, lse max abs %.3e, %lld NaN/inf, %lld empty-row errors, "
                "%lld elements",
                out_rel_l2, lse_max_abs, static_cast<long long>(nan_count),
                static_cast<long long>(empty_row_errors), static_cast<long long>(elements));
  return text;
}

Comparison compare(const smla_problem& problem, int num_rows, const ReferenceResult& reference,
                   const uint16_t* out, int64_t out_row_stride, int64_t out_head_stride,
                   const float* lse) {
  Comparison result;
  double error_sq = 0.0;
  double reference_sq = 0.0;
  for (int r = 0; r < num_rows; ++r) {
    bool empty_error = false;
    for (int h = 0; h < problem.num_heads; ++h) {
      const int64_t head = int64_t{r} * problem.num_heads + h;
      const double reference_lse = reference.lse[head];
      // The reference marks a row with no valid entry by lse = +inf (for every head).
      const bool empty = std::isinf(reference_lse) && reference_lse > 0;
      const uint16_t* got = out + r * out_row_stride + h * out_head_stride;
      const double* expected = reference.out.data() + head * SMLA_HEAD_DIM;
      for (int d = 0; d < SMLA_HEAD_DIM; ++d) {
        const double value = bf16_to_float(got[d]);
        ++result.elements;
        if (!std::isfinite(value)) {
          ++result.nan_count;
          continue;
        }
        if (empty && value != 0.0) empty_error = true;
        error_sq += (value - expected[d]) * (value - expected[d]);
        reference_sq += expected[d] * expected[d];
      }
      if (lse != nullptr) {
        const double value = lse[head];
        if (std::isnan(value)) {
          ++result.nan_count;
        } else if (empty) {
          if (!(std::isinf(value) && value > 0)) empty_error = true;
        } else {
          result.lse_max_abs = std::fmax(result.lse_max_abs, std::fabs(value - reference_lse));
        }
      }
    }
    if (empty_error) ++result.empty_row_errors;
  }
  // A reference that is 0 everywhere (all rows empty, or every sink +inf) admits only exact zeros.
  if (reference_sq > 0.0) {
    result.out_rel_l2 = std::sqrt(error_sq / reference_sq);
  } else if (error_sq > 0.0) {
    result.out_rel_l2 = std::numeric_limits<double>::infinity();
  }
  return result;
}

}  // namespace smla::ref
