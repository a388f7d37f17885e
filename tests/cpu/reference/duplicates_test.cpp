// An index listed twice is attended twice (within a source and across sources).
#include <gtest/gtest.h>

#include "tiny_case.h"

namespace smla::ref::testing {
namespace {

TEST(Duplicates, CountAsOftenAsListed) {
  for (smla_kv_layout layout : kAllLayouts) {
    SCOPED_TRACE(::testing::Message() << "layout " << layout);
    TinyCase tiny;
    tiny.layout = layout;
    tiny.sink = {0.5f};
    TinySource source;
    source.tokens = {{1, 2}, {2, -4}, {0.5, 6}};
    const Token t0 = source.tokens[0], t1 = source.tokens[1], t2 = source.tokens[2];
    source.rows = {{0, 0, 1, -1}, {1, 1, 1, 1}, {2, 0, 2, 2}};
    tiny.sources = {source};
    const ReferenceResult result = run(tiny);
    expect_mix(result, 1, 0, 0, {t0, t0, t1}, 1.0, 0.5);
    expect_mix(result, 1, 1, 0, {t1, t1, t1, t1}, 1.0, 0.5);  // lse = 2 + ln 4
    expect_mix(result, 1, 2, 0, {t2, t0, t2, t2}, 1.0, 0.5);
  }
}

TEST(Duplicates, AcrossSources) {
  TinyCase tiny;
  TinySource window;
  window.tokens = {{1, 2}};
  window.rows = {{0, 0}};
  TinySource compressed = window;
  compressed.rows = {{0}};
  tiny.sources = {window, compressed};
  const Token t = window.tokens[0];
  expect_mix(run(tiny), 1, 0, 0, {t, t, t}, 1.0);
}

}  // namespace
}  // namespace smla::ref::testing
