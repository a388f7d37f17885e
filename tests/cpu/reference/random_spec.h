// CaseSpecs shared by the tests that run the reference on random cases.
#pragma once

#include "reference/random_case.h"

namespace smla::ref::testing {

// A DSv4-like call, scaled down: a window (page 256 or 2) plus a top-k source (page 64 or 3).
inline CaseSpec small_spec(smla_kv_layout layout, smla_dtype q_dtype, int heads, int rows,
                           uint64_t seed) {
  CaseSpec spec;
  spec.problem.num_heads = heads;
  spec.problem.q_dtype = q_dtype;
  spec.problem.kv_layout = layout;
  spec.problem.q_len = 1;
  spec.problem.num_sources = 2;
  spec.problem.sources[0] = {SMLA_SOURCE_LIST, seed % 2 == 0 ? 256 : 2, 32, 0};
  spec.problem.sources[1] = {SMLA_SOURCE_LIST, seed % 2 == 0 ? 64 : 3, 48, 0};
  spec.problem.has_sink = 1;
  spec.problem.want_lse = 1;
  spec.num_rows = rows;
  spec.seed = seed;
  spec.q_scale = q_dtype == SMLA_FP8_E4M3 ? 0.125f : 1.0f;
  spec.kv_scale = layout == SMLA_KV_FP8_UNIFORM ? 0.5f : 1.0f;
  spec.infinite_sinks = true;
  spec.sources[0].invalid_fraction = 0.1;
  spec.sources[1].invalid_fraction = 0.1;
  return spec;
}

}  // namespace smla::ref::testing
