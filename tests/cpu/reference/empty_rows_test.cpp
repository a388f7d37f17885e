// A row with no valid entry in any source has out exactly 0 and lse +inf, whatever the sink.
#include <gtest/gtest.h>

#include "tiny_case.h"

namespace smla::ref::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int kHeads = 3;

TinyCase three_sinks(smla_kv_layout layout) {
  TinyCase tiny;
  tiny.layout = layout;
  tiny.alphas = {1, 1, 1};
  tiny.sink = {kInf, -kInf, 2.0f};
  return tiny;
}

TEST(EmptyRows, OutZeroAndLseInfinite) {
  for (smla_kv_layout layout : kAllLayouts) {
    SCOPED_TRACE(::testing::Message() << "layout " << layout);
    TinyCase tiny = three_sinks(layout);
    TinySource source;
    source.tokens = {{1, 2}, {2, 4}};  // one page of 2: index 2 is past the end
    source.rows = {{0, 1, -1}, {-1, -5, 2}, {0, 1, 1}, {0, 1, 1}};
    source.lengths = {3, 3, 0, 1};
    tiny.sources = {source};
    const ReferenceResult result = run(tiny);
    for (int h = 0; h < kHeads; ++h) {
      SCOPED_TRACE(h);
      expect_empty(result, kHeads, 1, h);  // every index invalid
      expect_empty(result, kHeads, 2, h);  // length 0
    }
    expect_mix(result, kHeads, 0, 2, {source.tokens[0], source.tokens[1]}, 1.0, 2.0);
    expect_mix(result, kHeads, 3, 1, {source.tokens[0]}, 1.0);
    expect_mix(result, kHeads, 3, 0, {source.tokens[0]}, 1.0, kInf);
  }
}

TEST(EmptyRows, OnlyWhenEverySourceIsEmpty) {
  TinyCase tiny = three_sinks(SMLA_KV_FP8_PACKED);
  TinySource window;
  window.tokens = {{1, 2}, {2, 4}};
  window.rows = {{-1, -1}, {-1, 7}};
  TinySource compressed;
  compressed.page_size = 3;
  compressed.tokens = {{-1, 6}};
  compressed.rows = {{0}, {-1}};
  tiny.sources = {window, compressed};
  const ReferenceResult result = run(tiny);
  expect_mix(result, kHeads, 0, 2, {compressed.tokens[0]}, 1.0, 2.0);
  for (int h = 0; h < kHeads; ++h) expect_empty(result, kHeads, 1, h);
}

// A source with no pages (and no cache pointer) has no valid entry at all.
TEST(EmptyRows, SourceWithoutPages) {
  TinyCase tiny = three_sinks(SMLA_KV_BF16);
  TinySource no_pages;  // no tokens: num_pages 0, cache NULL
  no_pages.rows = {{0, 1, -1}};
  TinySource other;
  other.tokens = {{1, 2}};
  other.rows = {{0}};
  tiny.sources = {no_pages, other};
  expect_mix(run(tiny), kHeads, 0, 1, {other.tokens[0]}, 1.0);
  tiny.sources = {no_pages};
  const ReferenceResult alone = run(tiny);
  for (int h = 0; h < kHeads; ++h) expect_empty(alone, kHeads, 0, h);
}

}  // namespace
}  // namespace smla::ref::testing
