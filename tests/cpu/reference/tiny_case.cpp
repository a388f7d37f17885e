#include "tiny_case.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "reference/codecs.h"

namespace smla::ref::testing {
namespace {

constexpr int kDim = SMLA_HEAD_DIM;
constexpr double kRelativeTolerance = 1e-12;

void fill_q(const TinyCase& tiny, TinyBuffers& buffers) {
  const int heads = static_cast<int>(tiny.alphas.size());
  const bool fp8 = tiny.q_dtype == SMLA_FP8_E4M3;
  const int64_t head_stride = tiny.q_head_stride != 0 ? tiny.q_head_stride : kDim;
  const int64_t row_stride = tiny.q_row_stride != 0 ? tiny.q_row_stride : heads * head_stride;
  const int64_t elements = (tiny.num_rows() - 1) * row_stride + (heads - 1) * head_stride + kDim;
  const int element_bytes = fp8 ? 1 : 2;
  buffers.q.assign(elements * element_bytes, 0);
  auto store = [&](int64_t element, float value) {
    if (fp8) {
      buffers.q[element] = float_to_e4m3(value / tiny.q_scale);
      return;
    }
    const uint16_t bits = float_to_bf16(value);
    buffers.q[2 * element] = static_cast<uint8_t>(bits & 0xFF);
    buffers.q[2 * element + 1] = static_cast<uint8_t>(bits >> 8);
  };
  // NaN everywhere first: the gaps between the vectors must never be read.
  for (int64_t e = 0; e < elements; ++e) store(e, std::numeric_limits<float>::quiet_NaN());
  for (int r = 0; r < tiny.num_rows(); ++r) {
    for (int h = 0; h < heads; ++h) {
      const int64_t base = r * row_stride + h * head_stride;
      for (int d = 0; d < kDim; ++d) store(base + d, d == 0 ? tiny.alphas[h] : 0.0f);
    }
  }
  const float decoded =
      fp8 ? e4m3_to_float(float_to_e4m3(tiny.alphas[0] / tiny.q_scale)) * tiny.q_scale
          : bf16_to_float(float_to_bf16(tiny.alphas[0]));
  EXPECT_EQ(decoded, tiny.alphas[0]) << "alpha not exact in the q encoding";
  buffers.args.q = buffers.q.data();
  buffers.args.q_row_stride = row_stride;
  buffers.args.q_head_stride = head_stride;
}

void fill_source(const TinyCase& tiny, int s, TinyBuffers& buffers) {
  const TinySource& source = tiny.sources[s];
  const int width = source.width != 0 ? source.width : static_cast<int>(source.rows.at(0).size());
  const int64_t row_stride = source.index_row_stride != 0 ? source.index_row_stride : width;
  const int64_t tokens = static_cast<int64_t>(source.tokens.size());
  const int64_t pages =
      source.num_pages != 0 ? source.num_pages : (tokens + source.page_size - 1) / source.page_size;
  const int64_t page_stride = smla_min_page_stride(tiny.layout, source.page_size);
  buffers.problem.sources[s] = {SMLA_SOURCE_LIST, source.page_size, width, 0};

  std::vector<uint8_t>& cache = buffers.caches[s];
  cache.assign(pages * page_stride, 0);
  for (int64_t t = 0; t < pages * source.page_size; ++t) {
    const Token token = t < tokens ? source.tokens[t] : poisoned();
    float values[kDim];
    std::fill_n(values, kDim, token.marker);
    values[0] = token.key;
    if (tiny.layout == SMLA_KV_FP8_UNIFORM) {
      for (float& value : values) value /= tiny.kv_scale;
    }
    encode_token(tiny.layout, source.page_size, page_stride, cache.data(), t, values);
    if (std::isnan(token.key)) continue;
    double decoded[kDim];
    decode_token(tiny.layout, source.page_size, page_stride, cache.data(), t, tiny.kv_scale,
                 decoded);
    EXPECT_TRUE(decoded[0] == token.key && decoded[1] == token.marker &&
                decoded[kDim - 1] == token.marker)
        << "token " << t << " of source " << s << " is not exact in this layout";
  }

  std::vector<int32_t>& indices = buffers.indices[s];
  indices.clear();
  for (const std::vector<int32_t>& row : source.rows) {
    EXPECT_EQ(static_cast<int64_t>(row.size()), row_stride) << "a row must fill its stride";
    indices.insert(indices.end(), row.begin(), row.end());
  }
  buffers.lengths[s] = source.lengths;
  smla_source_args& args = buffers.args.sources[s];
  args.cache = cache.empty() ? nullptr : cache.data();
  args.page_stride_bytes = page_stride;
  args.num_pages = pages;
  args.indices = indices.data();
  args.index_row_stride = row_stride;
  args.lengths = buffers.lengths[s].empty() ? nullptr : buffers.lengths[s].data();
}

}  // namespace

Token poisoned() {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  return {nan, nan};
}

void build(const TinyCase& tiny, TinyBuffers& buffers) {
  buffers = TinyBuffers{};
  const int sources = static_cast<int>(tiny.sources.size());
  buffers.problem.num_heads = static_cast<int>(tiny.alphas.size());
  buffers.problem.q_dtype = tiny.q_dtype;
  buffers.problem.kv_layout = tiny.layout;
  buffers.problem.q_len = 1;
  buffers.problem.num_sources = sources;
  buffers.problem.has_sink = tiny.sink.empty() ? 0 : 1;
  buffers.problem.want_lse = 1;
  buffers.args.num_rows = tiny.num_rows();
  buffers.args.q_scale = tiny.q_scale;
  buffers.args.kv_scale = tiny.kv_scale;
  buffers.args.softmax_scale = tiny.softmax_scale;
  fill_q(tiny, buffers);
  buffers.caches.resize(sources);
  buffers.indices.resize(sources);
  buffers.lengths.resize(sources);
  for (int s = 0; s < sources; ++s) fill_source(tiny, s, buffers);
  buffers.sink = tiny.sink;
  buffers.args.sink = buffers.sink.empty() ? nullptr : buffers.sink.data();
}

ReferenceResult run(const TinyCase& tiny) {
  TinyBuffers buffers;
  build(tiny, buffers);
  return attention(buffers.problem, buffers.args);
}

void expect_mix(const ReferenceResult& result, int heads, int row, int head,
                const std::vector<Token>& attended, double score_factor, double sink) {
  ASSERT_FALSE(attended.empty());
  double max_score = -std::numeric_limits<double>::infinity();
  for (const Token& token : attended) max_score = std::max(max_score, score_factor * token.key);
  double sum = 0, key_mix = 0, marker_mix = 0;
  for (const Token& token : attended) {
    const double weight = std::exp(score_factor * token.key - max_score);
    sum += weight;
    key_mix += weight * token.key;
    marker_mix += weight * token.marker;
  }
  const double denominator = sum + std::exp(sink - max_score);
  const double expected_lse = max_score + std::log(sum);
  const size_t head_index = static_cast<size_t>(row) * heads + head;
  EXPECT_NEAR(result.lse[head_index], expected_lse,
              kRelativeTolerance * std::max(1.0, std::fabs(expected_lse)))
      << "lse of row " << row << " head " << head;
  const double* out = result.out.data() + head_index * kDim;
  for (int d = 0; d < kDim; ++d) {
    const double expected = (d == 0 ? key_mix : marker_mix) / denominator;
    if (!(std::fabs(out[d] - expected) <= kRelativeTolerance * std::fabs(expected))) {
      ADD_FAILURE() << "out of row " << row << " head " << head << " dim " << d << " is " << out[d]
                    << ", expected " << expected;
      return;
    }
  }
}

void expect_empty(const ReferenceResult& result, int heads, int row, int head) {
  const size_t head_index = static_cast<size_t>(row) * heads + head;
  EXPECT_EQ(result.lse[head_index], std::numeric_limits<double>::infinity())
      << "lse of row " << row << " head " << head;
  const double* out = result.out.data() + head_index * kDim;
  EXPECT_TRUE(std::all_of(out, out + kDim, [](double value) { return value == 0.0; }))
      << "out of row " << row << " head " << head << " is not exactly 0";
}

}  // namespace smla::ref::testing
