// The sink is a logit of the denominator only, not multiplied by softmax_scale: +inf gives out 0
// (lse unchanged), -inf is no sink, a finite sink adds exp(sink).
#include <gtest/gtest.h>

#include "tiny_case.h"

namespace smla::ref::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(Sink, JoinsOnlyTheDenominator) {
  for (smla_kv_layout layout : kAllLayouts) {
    SCOPED_TRACE(::testing::Message() << "layout " << layout);
    TinyCase tiny;
    tiny.layout = layout;
    tiny.softmax_scale = 0.5f;
    tiny.alphas = {1, 1, 1, 2, 1};
    tiny.sink = {kInf, -kInf, 1.0f, 1.0f, 80.0f};
    TinySource source;
    source.tokens = {{1, 2}, {2, -4}, {-1, 6}};
    source.rows = {{0, 1, 2}};
    tiny.sources = {source};
    const ReferenceResult result = run(tiny);
    const std::vector<Token> all = source.tokens;
    {
      SCOPED_TRACE("+inf: out exactly 0, lse without the sink");
      expect_mix(result, 5, 0, 0, all, 0.5, kInf);
    }
    {
      SCOPED_TRACE("-inf: as if there were no sink");
      expect_mix(result, 5, 0, 1, all, 0.5);
    }
    {
      SCOPED_TRACE("finite: exp(1), not exp(0.5 * 1)");
      expect_mix(result, 5, 0, 2, all, 0.5, 1.0);
      expect_mix(result, 5, 0, 3, all, 1.0, 1.0);
    }
    {
      SCOPED_TRACE("large finite: tiny but exact");
      expect_mix(result, 5, 0, 4, all, 0.5, 80.0);
    }
  }
}

TEST(Sink, NoSinkEqualsMinusInfinity) {
  TinyCase tiny;
  tiny.alphas = {1, 3};
  TinySource source;
  source.tokens = {{1, 2}, {2, -4}};
  source.rows = {{0, 1}, {1, 1}};
  tiny.sources = {source};
  const ReferenceResult without = run(tiny);
  tiny.sink = {-kInf, -kInf};
  const ReferenceResult minus_inf = run(tiny);
  EXPECT_EQ(without.out, minus_inf.out);
  EXPECT_EQ(without.lse, minus_inf.lse);
  expect_mix(without, 2, 1, 1, {source.tokens[1], source.tokens[1]}, 3.0);
}

}  // namespace
}  // namespace smla::ref::testing
