// encode_token then decode_token at every token of a multi-page cache gives each value rounded
// as its layout rounds it; kv_scale multiplies the uniform layout only.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "reference/codecs.h"

namespace smla::ref {
namespace {

constexpr int kDim = SMLA_HEAD_DIM;

// What the layout stores of `values[d]` once decoded with kv_scale 1.
double rounded(smla_kv_layout layout, const float* values, int d) {
  if (layout == SMLA_KV_BF16 || (layout == SMLA_KV_FP8_PACKED && d >= 448)) {
    return bf16_to_float(float_to_bf16(values[d]));
  }
  if (layout == SMLA_KV_FP8_UNIFORM) return e4m3_to_float(float_to_e4m3(values[d]));
  double amax = 0;
  for (int i = d / 64 * 64; i < d / 64 * 64 + 64; ++i) amax = std::fmax(amax, std::fabs(values[i]));
  const double scale = std::exp2(std::ceil(std::log2(amax / 448.0)));
  return e4m3_to_float(float_to_e4m3(static_cast<float>(values[d] / scale))) * scale;
}

TEST(CodecRoundTrip, EveryTokenOfAPagedCache) {
  std::mt19937_64 engine(3);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (smla_kv_layout layout : {SMLA_KV_FP8_UNIFORM, SMLA_KV_FP8_PACKED, SMLA_KV_BF16}) {
    for (int page_size : {1, 3, 61}) {
      SCOPED_TRACE(::testing::Message() << "layout " << layout << " page " << page_size);
      const int64_t stride = smla_min_page_stride(layout, page_size) + 16;
      const int64_t tokens = 2 * page_size + 1;
      std::vector<uint8_t> cache(3 * stride);
      std::vector<float> values(tokens * kDim);
      for (float& value : values) value = normal(engine);
      for (int64_t t = 0; t < tokens; ++t) {
        encode_token(layout, page_size, stride, cache.data(), t, values.data() + t * kDim);
      }
      // Decoded after all tokens are written: no token overwrote another.
      for (int64_t t = 0; t < tokens; ++t) {
        double decoded[kDim];
        decode_token(layout, page_size, stride, cache.data(), t, 1.0f, decoded);
        for (int d = 0; d < kDim; ++d) {
          ASSERT_EQ(decoded[d], rounded(layout, values.data() + t * kDim, d))
              << "token " << t << " dim " << d;
        }
        double scaled[kDim];
        decode_token(layout, page_size, stride, cache.data(), t, 0.25f, scaled);
        const double factor = layout == SMLA_KV_FP8_UNIFORM ? 0.25 : 1.0;
        for (int d = 0; d < kDim; ++d) ASSERT_EQ(scaled[d], decoded[d] * factor) << d;
      }
    }
  }
}

}  // namespace
}  // namespace smla::ref
