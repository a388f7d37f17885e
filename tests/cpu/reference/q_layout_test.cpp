// q is read through q_row_stride and q_head_stride (elements, for bf16 and fp8 alike); the gaps
// between vectors hold NaN, so reading one would show.
#include <gtest/gtest.h>

#include "tiny_case.h"

namespace smla::ref::testing {
namespace {

TEST(QLayout, StridesInElements) {
  const struct {
    int64_t row_stride;
    int64_t head_stride;
  } layouts[] = {
      {0, 0},               // contiguous [row][head][512]
      {3 * 520 + 24, 520},  // padded heads and rows
      {512, 2 * 512},       // [head][row][512]
  };
  for (smla_dtype q_dtype : {SMLA_BF16, SMLA_FP8_E4M3}) {
    for (const auto& layout : layouts) {
      SCOPED_TRACE(::testing::Message() << "q " << q_dtype << " strides " << layout.row_stride
                                        << ", " << layout.head_stride);
      TinyCase tiny;
      tiny.q_dtype = q_dtype;
      tiny.q_row_stride = layout.row_stride;
      tiny.q_head_stride = layout.head_stride;
      tiny.alphas = {1, 2, 0.5};
      if (layout.head_stride == 1024) tiny.alphas = {1, 2};  // two rows interleave two heads
      TinySource source;
      source.tokens = {{1, 2}, {2, -4}, {-1, 6}};
      source.rows = {{0, 1, 2}, {2, 2, -1}};
      tiny.sources = {source};
      const int heads = static_cast<int>(tiny.alphas.size());
      const ReferenceResult result = run(tiny);
      for (int h = 0; h < heads; ++h) {
        expect_mix(result, heads, 0, h, source.tokens, tiny.alphas[h]);
        expect_mix(result, heads, 1, h, {source.tokens[2], source.tokens[2]}, tiny.alphas[h]);
      }
    }
  }
}

}  // namespace
}  // namespace smla::ref::testing
