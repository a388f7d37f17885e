// Only columns [0, clamp(len, 0, width)) are read; columns past the length and past the width
// (index_row_stride > width) point at a NaN token here, so reading them would show.
#include <gtest/gtest.h>

#include "tiny_case.h"

namespace smla::ref::testing {
namespace {

TEST(Lengths, OnlyTheFirstLengthColumns) {
  for (smla_kv_layout layout : kAllLayouts) {
    SCOPED_TRACE(::testing::Message() << "layout " << layout);
    TinyCase tiny;
    tiny.layout = layout;
    TinySource source;
    source.tokens = {{1, 2}, {2, -4}, poisoned(), {0.5, 6}};
    const Token t0 = source.tokens[0], t1 = source.tokens[1], t3 = source.tokens[3];
    source.width = 3;
    source.index_row_stride = 5;
    source.rows = {
        {0, 1, 2, 2, 2},  // length 2
        {3, 2, 2, 2, 2},  // length 1
        {0, 1, 3, 2, 2},  // length 7: clamped to the width
        {2, 2, 2, 2, 2},  // length -4: clamped to 0
        {0, 0, 0, 2, 2},  // length 0
    };
    source.lengths = {2, 1, 7, -4, 0};
    tiny.sources = {source};
    const ReferenceResult result = run(tiny);
    expect_mix(result, 1, 0, 0, {t0, t1}, 1.0);
    expect_mix(result, 1, 1, 0, {t3}, 1.0);
    expect_mix(result, 1, 2, 0, {t0, t1, t3}, 1.0);
    expect_empty(result, 1, 3, 0);
    expect_empty(result, 1, 4, 0);

    SCOPED_TRACE("no lengths array: the full width, nothing past it");
    tiny.sources[0].lengths.clear();
    tiny.sources[0].rows = {{0, 1, 3, 2, 2}, {3, 3, 0, 2, 2}};
    const ReferenceResult full = run(tiny);
    expect_mix(full, 1, 0, 0, {t0, t1, t3}, 1.0);
    expect_mix(full, 1, 1, 0, {t3, t3, t0}, 1.0);
  }
}

}  // namespace
}  // namespace smla::ref::testing
