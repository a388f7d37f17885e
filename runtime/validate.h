// Argument validation for the C API (docs/design.md). Runs before anything else on every call:
// each rejected value is SMLA_ERR_INVALID_ARGUMENT with a message naming the field and value,
// e.g. "problem.sources[1].width = 0: must be in [1, 65536]". What the kernels cannot run is
// SMLA_ERR_UNSUPPORTED, reported only when nothing is invalid.
//
// Validation never dereferences a device pointer: it checks presence, alignment and the
// arithmetic of strides and sizes. The only memory it reads is the host arrays of smla_varlen.
#pragma once

#include <smla.h>

#include <cstddef>

#include "support/status.h"

namespace smla {

// The most rows one call (and one smla_prepare) may have. With it, row * num_heads + head fits in
// int32 for every row and head (2^24 * 128 = 2^31), so kernels can index rows and heads in 32 bits.
inline constexpr int kMaxRows = 1 << 24;

// NULL means defaults and is valid.
Status validate_options(const smla_options* options);
Status validate_problem(const smla_problem* problem);
// max_rows in [1, kMaxRows].
Status validate_max_rows(int max_rows);
// Assumes `problem` is valid. num_rows == 0 is a no-op that reads nothing, so with it every field
// but num_rows is ignored (a server may pass an empty batch with unset pointers and scales).
// out and lse may not overlap each other or anything the call reads, and no array's extent may
// run past the end of the address space. `varlen` is required when a source is a window or a
// prefix (their block tables and positions are checked against it) and checked whenever given.
Status validate_args(const smla_problem& problem, const smla_args* args,
                     const smla_varlen* varlen = nullptr);
// The scales a call's scores are multiplied by, together: softmax_scale, times q_scale for fp8
// q and kv_scale for the uniform layout. validate_args keeps it (times log2 e) finite in float,
// the form the kernels take it in.
double score_scale(const smla_problem& problem, const smla_args& args);
// Prefill's varlen description is required even where no source reads it (its rows are
// requests' new tokens); validate_args checks its fields. Checked after validate_args, so that
// prefill rejects bad arguments as decode does.
Status require_varlen(const smla_varlen* varlen);
// Assumes `problem`, `args` and `varlen` are valid. The `used_bytes` of the workspace a call
// writes (its split partials) must not overlap any array the call reads or writes: the partials
// and those arrays would corrupt each other silently.
Status validate_workspace_overlap(const smla_problem& problem, const smla_args& args,
                                  const void* workspace, size_t used_bytes,
                                  const smla_varlen* varlen = nullptr);
// NULL only with bytes == 0; a non-NULL pointer is 16-byte aligned. Whether `bytes` is enough is
// dispatch's check (SMLA_ERR_WORKSPACE), since it depends on the kernels chosen.
Status validate_workspace(const void* workspace, size_t bytes);

}  // namespace smla
