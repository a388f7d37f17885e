// Indices outside [0, num_pages * page_size) are skipped and their memory never read: each cache
// is sized exactly to its pages, so under AddressSanitizer a read past the last page fails.
#include <gtest/gtest.h>

#include "tiny_case.h"

namespace smla::ref::testing {
namespace {

constexpr int32_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int32_t kInt32Min = std::numeric_limits<int32_t>::min();

TEST(InvalidIndices, SkippedAndNeverRead) {
  for (smla_kv_layout layout : kAllLayouts) {
    for (int page_size : {1, 2, 3}) {
      SCOPED_TRACE(::testing::Message() << "layout " << layout << " page " << page_size);
      TinyCase tiny;
      tiny.layout = layout;
      TinySource source;
      source.page_size = page_size;
      const int32_t limit = 2 * page_size;
      for (int t = 0; t < limit; ++t) source.tokens.push_back({0.5f * t, 2.0f * t + 1});
      source.rows = {
          {-1, 1, -2, kInt32Min, limit, limit + 1, kInt32Max, 0, limit - 1},
          {limit, -1, -1, -1, -1, -1, -1, -1, -1},
      };
      tiny.sources = {source};
      const ReferenceResult result = run(tiny);
      expect_mix(result, 1, 0, 0, {source.tokens[1], source.tokens[0], source.tokens[limit - 1]},
                 1.0);
      expect_empty(result, 1, 1, 0);
    }
  }
}

// num_pages * page_size is computed in 64 bits: with 2^29 + 1 pages of 8 the limit is 2^32 + 8,
// which a 32-bit product would wrap to 8 and so reject index 100.
TEST(InvalidIndices, LimitComputedIn64Bits) {
  TinyCase tiny;
  TinySource source;
  source.page_size = 8;
  source.num_pages = 16;  // what is allocated; the call claims more below
  source.tokens.assign(128, poisoned());
  source.tokens[100] = {2, 4};
  source.tokens[3] = {1, 2};
  source.rows = {{100, 3, -1}};
  tiny.sources = {source};
  TinyBuffers buffers;
  build(tiny, buffers);
  buffers.args.sources[0].num_pages = (int64_t{1} << 29) + 1;
  expect_mix(attention(buffers.problem, buffers.args), 1, 0, 0,
             {source.tokens[100], source.tokens[3]}, 1.0);
}

}  // namespace
}  // namespace smla::ref::testing
