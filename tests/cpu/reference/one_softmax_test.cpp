// Both sources join one softmax (one max, one sum, one sink term): the same as one source
// listing all their entries, not two softmaxes merged.
#include <gtest/gtest.h>

#include "tiny_case.h"

namespace smla::ref::testing {
namespace {

TEST(OneSoftmax, OverBothSources) {
  for (smla_kv_layout layout : kAllLayouts) {
    SCOPED_TRACE(::testing::Message() << "layout " << layout);
    TinyCase two;
    two.layout = layout;
    two.softmax_scale = 0.75f;
    two.alphas = {1, -2};
    two.sink = {0.5f, 3.0f};
    TinySource window;
    window.tokens = {{1, 2}, {2, -4}};
    window.rows = {{0, 1}, {1, -1}};
    TinySource compressed;
    compressed.page_size = 3;
    compressed.tokens = {{3, 6}, {-1, 1}};
    compressed.rows = {{0, 1}, {-1, 0}};
    two.sources = {window, compressed};
    const ReferenceResult result = run(two);
    const Token a0 = window.tokens[0], a1 = window.tokens[1];
    const Token b0 = compressed.tokens[0], b1 = compressed.tokens[1];
    expect_mix(result, 2, 0, 0, {a0, a1, b0, b1}, 0.75, 0.5);
    expect_mix(result, 2, 0, 1, {a0, a1, b0, b1}, -1.5, 3.0);
    expect_mix(result, 2, 1, 0, {a1, b0}, 0.75, 0.5);

    // One source listing the same entries in the same order gives the same bits.
    TinyCase one = two;
    TinySource all;
    all.tokens = {a0, a1, b0, b1};
    all.rows = {{0, 1, 2, 3}, {1, 2, -1, -1}};
    one.sources = {all};
    const ReferenceResult merged = run(one);
    EXPECT_EQ(result.out, merged.out);
    EXPECT_EQ(result.lse, merged.lse);
  }
}

}  // namespace
}  // namespace smla::ref::testing
