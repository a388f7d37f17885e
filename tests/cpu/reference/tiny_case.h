// Hand-made calls small enough to work out by hand. The q of head h is alpha_h * e_0 (dim 0
// only), and a token is {key, marker}: dim 0 holds key and dims 1..511 hold marker. So the score
// of a token is softmax_scale * alpha_h * key, and out (dim 0 and the marker dims) shows which
// tokens were mixed with which weights. Every buffer is sized exactly (caches to their pages,
// tables to their rows, q to its strides), so AddressSanitizer catches a read past any of them;
// unlisted slots of a page and gaps between q vectors hold NaN, so reading them shows in out.
#pragma once

#include <smla.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "reference/attention.h"

namespace smla::ref::testing {

inline constexpr smla_kv_layout kAllLayouts[] = {SMLA_KV_FP8_UNIFORM, SMLA_KV_FP8_PACKED,
                                                 SMLA_KV_BF16};

struct Token {
  float key = 0;
  float marker = 0;
};
// A token whose bytes are NaN: attending it makes out NaN.
Token poisoned();

struct TinySource {
  int page_size = 2;
  int64_t num_pages = 0;         // 0: just enough pages for `tokens`
  std::vector<Token> tokens;     // physical tokens 0, 1, ...; the rest of the pool is poisoned
  int width = 0;                 // 0: the size of the rows
  int64_t index_row_stride = 0;  // 0: width; rows hold the columns past it too
  std::vector<std::vector<int32_t>> rows;  // index table, one vector per row
  std::vector<int32_t> lengths;            // empty: no lengths array
};

struct TinyCase {
  smla_kv_layout layout = SMLA_KV_BF16;
  smla_dtype q_dtype = SMLA_BF16;
  std::vector<float> alphas = {1.0f};  // one per head: q[h] = alpha_h * e_0 (after q_scale)
  int64_t q_row_stride = 0;            // elements; 0: contiguous
  int64_t q_head_stride = 0;           // elements; 0: 512
  float q_scale = 1.0f;
  float kv_scale = 1.0f;
  float softmax_scale = 1.0f;
  std::vector<TinySource> sources;
  std::vector<float> sink;  // one per head, or empty: no sink
  int num_rows() const { return static_cast<int>(sources.at(0).rows.size()); }
};

// The host buffers of a TinyCase and the problem and arguments pointing into them.
struct TinyBuffers {
  smla_problem problem{};
  smla_args args{};
  std::vector<uint8_t> q;
  std::vector<std::vector<uint8_t>> caches;
  std::vector<std::vector<int32_t>> indices;
  std::vector<std::vector<int32_t>> lengths;
  std::vector<float> sink;
};

// Builds the buffers; fails the test if a token or alpha is not exact in the chosen encoding.
void build(const TinyCase& tiny, TinyBuffers& buffers);
ReferenceResult run(const TinyCase& tiny);

// Expects (row, head) to be the softmax of `attended` (duplicates listed as often as attended)
// with scores score_factor * key and the given sink logit (-inf: no sink term).
void expect_mix(const ReferenceResult& result, int heads, int row, int head,
                const std::vector<Token>& attended, double score_factor,
                double sink = -std::numeric_limits<double>::infinity());
// Expects (row, head) to have out exactly 0 and lse +inf.
void expect_empty(const ReferenceResult& result, int heads, int row, int head);

}  // namespace smla::ref::testing
