// The CPU reference of docs/semantics.md in fp64: the single oracle every test and tool compares
// against. It takes the same smla_problem / smla_args as the API, with host pointers.
#pragma once

#include <smla.h>

#include <vector>

namespace smla::ref {

struct ReferenceResult {
  std::vector<double> out;  // [num_rows][num_heads][512], exact (before bf16 rounding)
  std::vector<double> lse;  // [num_rows][num_heads], natural log without the sink; +inf if empty
};

// Computes one call. Every pointer in `args` is a host pointer (args.out and args.lse are not
// used). Entries with c >= len or an index outside [0, num_pages * page_size) are skipped and
// never read. Assumes the problem and args passed validation. `threads` <= 0: hardware count.
ReferenceResult attention(const smla_problem& problem, const smla_args& args, int threads = 0);

}  // namespace smla::ref
