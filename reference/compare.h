// Compares a kernel's output (bf16 out, optional fp32 lse, copied to the host) against the
// reference, with docs/semantics.md's tolerances. Used by the GPU tests, `smla check` and
// `smla bench`, so every caller judges a kernel the same way.
#pragma once

#include <smla.h>

#include <cstdint>
#include <string>

#include "reference/attention.h"

namespace smla::ref {

struct Tolerance {
  double out_rel_l2 = 1e-2;  // relative L2 of out over the whole call
  double lse_abs = 2e-3;     // absolute error of lse
};

struct Comparison {
  // ||out - ref|| / ||ref|| over all rows and heads and the finite elements of out; when the
  // reference is 0 everywhere, 0 if out is too and +inf otherwise.
  double out_rel_l2 = 0;
  double lse_max_abs = 0;  // max |lse - ref| over non-empty rows (+inf for an inf lse)
  int64_t nan_count = 0;   // NaN or inf in out, or NaN in lse
  // Rows with no valid entry (reference lse +inf) where some head's out is not exactly 0 (-0 is
  // accepted) or its lse is not +inf.
  int64_t empty_row_errors = 0;
  int64_t elements = 0;  // out elements compared
  // No NaN, no empty-row error, both errors within the tolerance.
  bool passed(const Tolerance& tolerance) const;
  std::string summary() const;
};

// `out` points to host bf16 values laid out with the given element strides (as smla_args);
// `lse` is [num_rows][num_heads] or NULL when the problem does not want it.
Comparison compare(const smla_problem& problem, int num_rows, const ReferenceResult& reference,
                   const uint16_t* out, int64_t out_row_stride, int64_t out_head_stride,
                   const float* lse);

}  // namespace smla::ref
