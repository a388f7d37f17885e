// Where a token lives in a paged cache, for every layout and odd page sizes: hand-computed
// offsets, and every token of a multi-page cache inside its page with no two overlapping.
#include <gtest/gtest.h>

#include <vector>

#include "reference/codecs.h"

namespace smla::ref {
namespace {

constexpr smla_kv_layout kLayouts[] = {SMLA_KV_FP8_UNIFORM, SMLA_KV_FP8_PACKED, SMLA_KV_BF16};

TEST(TokenLocation, MinimumPageStrides) {
  EXPECT_EQ(smla_min_page_stride(SMLA_KV_FP8_PACKED, 256), 149760);
  EXPECT_EQ(smla_min_page_stride(SMLA_KV_FP8_PACKED, 64), 37440);
  EXPECT_EQ(smla_min_page_stride(SMLA_KV_FP8_PACKED, 2), 1728);
  EXPECT_EQ(smla_min_page_stride(SMLA_KV_FP8_PACKED, 1), 1152);
  EXPECT_EQ(smla_min_page_stride(SMLA_KV_FP8_PACKED, 3), 2304);
  EXPECT_EQ(smla_min_page_stride(SMLA_KV_FP8_PACKED, 61), 35712);
  EXPECT_EQ(smla_min_page_stride(SMLA_KV_FP8_UNIFORM, 61), 61 * 512);
  EXPECT_EQ(smla_min_page_stride(SMLA_KV_BF16, 3), 3 * 1024);
}

TEST(TokenLocation, HandComputed) {
  const struct {
    smla_kv_layout layout;
    int page_size;
    int64_t stride;
    int64_t token;
    int64_t data;
    int64_t scale;
  } cases[] = {
      // page size 1: every token its own page
      {SMLA_KV_FP8_UNIFORM, 1, 512, 0, 0, -1},
      {SMLA_KV_FP8_UNIFORM, 1, 512, 5, 2560, -1},
      {SMLA_KV_FP8_PACKED, 1, 1152, 0, 0, 576},
      {SMLA_KV_FP8_PACKED, 1, 1152, 3, 3456, 3456 + 576},
      {SMLA_KV_BF16, 1, 1040, 2, 2080, -1},
      // page size 3: token 4 is slot 1 of page 1
      {SMLA_KV_FP8_UNIFORM, 3, 1536, 4, 1536 + 512, -1},
      {SMLA_KV_FP8_PACKED, 3, 2304, 4, 2304 + 576, 2304 + 1728 + 8},
      {SMLA_KV_FP8_PACKED, 3, 2320, 2, 1152, 1728 + 16},
      {SMLA_KV_BF16, 3, 3072, 5, 3072 + 2048, -1},
      // page size 61: token 130 is slot 8 of page 2
      {SMLA_KV_FP8_UNIFORM, 61, 31232, 130, 2 * 31232 + 8 * 512, -1},
      {SMLA_KV_FP8_PACKED, 61, 35712, 130, 2 * 35712 + 8 * 576, 2 * 35712 + 61 * 576 + 64},
      {SMLA_KV_BF16, 61, 62464, 130, 2 * 62464 + 8 * 1024, -1},
      // offsets past 2^31 bytes stay exact
      {SMLA_KV_FP8_PACKED, 64, 37440, 64 * 100000 + 1, 100000LL * 37440 + 576,
       100000LL * 37440 + 64 * 576 + 8},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << "layout " << c.layout << " page " << c.page_size << " token " << c.token);
    const TokenLocation location = token_location(c.layout, c.page_size, c.stride, c.token);
    EXPECT_EQ(location.data_offset, c.data);
    EXPECT_EQ(location.scale_offset, c.scale);
  }
}

// Marks every byte each token owns: all inside the token's page, none owned twice.
TEST(TokenLocation, TokensTilePagesWithoutOverlap) {
  for (smla_kv_layout layout : kLayouts) {
    for (int page_size : {1, 3, 61}) {
      for (int64_t extra : {0, 48}) {
        SCOPED_TRACE(::testing::Message()
                     << "layout " << layout << " page " << page_size << " extra stride " << extra);
        const int64_t stride = smla_min_page_stride(layout, page_size) + extra;
        const int pages = 3;
        std::vector<int> owner(pages * stride, -1);
        for (int64_t t = 0; t < int64_t{pages} * page_size; ++t) {
          const TokenLocation location = token_location(layout, page_size, stride, t);
          const int64_t page_start = t / page_size * stride;
          auto claim = [&](int64_t first, int64_t bytes) {
            ASSERT_GE(first, page_start);
            ASSERT_LE(first + bytes, page_start + stride);
            for (int64_t b = first; b < first + bytes; ++b) {
              ASSERT_EQ(owner[b], -1) << "byte " << b << " of tokens " << owner[b] << ", " << t;
              owner[b] = static_cast<int>(t);
            }
          };
          if (layout == SMLA_KV_FP8_PACKED) {
            claim(location.data_offset, 576);
            claim(location.scale_offset, 8);
          } else {
            claim(location.data_offset, layout == SMLA_KV_BF16 ? 1024 : 512);
            EXPECT_EQ(location.scale_offset, -1);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace smla::ref
