// Per-tensor scales are applied once: fp8 q times q_scale, uniform KV times kv_scale; the packed
// and bf16 layouts ignore kv_scale.
#include <gtest/gtest.h>

#include "tiny_case.h"

namespace smla::ref::testing {
namespace {

TinySource three_tokens() {
  TinySource source;
  source.tokens = {{1, 2}, {2, -4}, {-0.5, 6}};
  source.rows = {{0, 1, 2}};
  return source;
}

TEST(Scales, Fp8QTimesQScale) {
  for (float q_scale : {0.5f, 4.0f}) {
    SCOPED_TRACE(q_scale);
    TinyCase tiny;
    tiny.q_dtype = SMLA_FP8_E4M3;
    tiny.q_scale = q_scale;
    tiny.alphas = {1, 2, 0.25};  // stored as e4m3(alpha / q_scale), all exact
    tiny.softmax_scale = 0.5f;
    tiny.sources = {three_tokens()};
    const ReferenceResult result = run(tiny);
    for (int h = 0; h < 3; ++h) {
      expect_mix(result, 3, 0, h, tiny.sources[0].tokens, 0.5 * tiny.alphas[h]);
    }
  }
}

TEST(Scales, UniformKvTimesKvScale) {
  for (float kv_scale : {2.0f, 0.25f}) {
    for (smla_dtype q_dtype : {SMLA_BF16, SMLA_FP8_E4M3}) {
      SCOPED_TRACE(::testing::Message() << "kv_scale " << kv_scale << " q " << q_dtype);
      TinyCase tiny;
      tiny.layout = SMLA_KV_FP8_UNIFORM;
      tiny.q_dtype = q_dtype;
      tiny.q_scale = 2.0f;
      tiny.kv_scale = kv_scale;  // the cache holds token / kv_scale
      tiny.alphas = {1, 0.5};
      tiny.sources = {three_tokens()};
      const ReferenceResult result = run(tiny);
      expect_mix(result, 2, 0, 0, tiny.sources[0].tokens, 1.0);
      expect_mix(result, 2, 0, 1, tiny.sources[0].tokens, 0.5);
    }
  }
}

TEST(Scales, KvScaleOnlyForUniform) {
  for (smla_kv_layout layout : {SMLA_KV_FP8_PACKED, SMLA_KV_BF16}) {
    SCOPED_TRACE(::testing::Message() << "layout " << layout);
    TinyCase tiny;
    tiny.layout = layout;
    tiny.kv_scale = 8.0f;
    tiny.sources = {three_tokens()};
    expect_mix(run(tiny), 1, 0, 0, tiny.sources[0].tokens, 1.0);
  }
}

}  // namespace
}  // namespace smla::ref::testing
