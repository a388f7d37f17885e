// validate_args on args.sources[s]: cache pointer, page stride per layout, page count, index
// table and lengths; errors name the source; unused sources are ignored.
#include <cstdint>
#include <string>

#include "validate_fixture.h"

namespace smla::validate_test {
namespace {

TEST(ValidateSource, CacheRequiredWhenThereArePages) {
  Call call;
  call.args.sources[1].cache = nullptr;
  EXPECT_TRUE(IsInvalid(call.validate(),
                        {"args.sources[1].cache = NULL", "args.sources[1].num_pages > 0"}));
}

TEST(ValidateSource, CacheMayBeNullWithoutPages) {
  Call call;
  call.args.sources[1].cache = nullptr;
  call.args.sources[1].num_pages = 0;  // every index is skipped: nothing is read
  EXPECT_TRUE(IsOk(call.validate()));
}

TEST(ValidateSource, CacheIs16ByteAligned) {
  Call call;
  call.args.sources[0].cache = fake_pointer<const void>(1, 4);
  EXPECT_TRUE(IsInvalid(call.validate(),
                        {"args.sources[0].cache = 0x7f0100000004: must be 16-byte aligned"}));
  call.args.sources[0].num_pages = 0;  // still checked: a misaligned pointer is a caller bug
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.sources[0].cache = 0x", "16-byte aligned"}));
}

TEST(ValidateSource, PageStrideAtLeastTheLayoutsPageBytes) {
  struct Case {
    smla_kv_layout layout;
    int page_size;
    int64_t min_stride;
  };
  // docs/semantics.md: uniform P*512, packed ceil(P*584/576)*576, bf16 P*1024.
  for (const Case& c : {Case{SMLA_KV_FP8_UNIFORM, 64, 32768}, Case{SMLA_KV_FP8_PACKED, 256, 149760},
                        Case{SMLA_KV_FP8_PACKED, 64, 37440}, Case{SMLA_KV_FP8_PACKED, 2, 1728},
                        Case{SMLA_KV_BF16, 1, 1024}}) {
    smla_problem problem = with_kv_layout(c.layout);
    problem.sources[1].page_size = c.page_size;
    Call call(problem);
    call.args.sources[1].page_stride_bytes = c.min_stride;
    EXPECT_TRUE(IsOk(call.validate())) << c.layout << " " << c.page_size;
    call.args.sources[1].page_stride_bytes = c.min_stride - 16;
    EXPECT_TRUE(IsInvalid(call.validate(), {"args.sources[1].page_stride_bytes = " +
                                                std::to_string(c.min_stride - 16),
                                            "must be >= " + std::to_string(c.min_stride)}))
        << c.layout << " " << c.page_size;
  }
}

TEST(ValidateSource, PageStrideIsAMultipleOf16) {
  Call call;
  call.args.sources[0].page_stride_bytes += 8;
  EXPECT_TRUE(
      IsInvalid(call.validate(), {"args.sources[0].page_stride_bytes = 149768", "multiple of 16"}));
  call.args.sources[0].page_stride_bytes += 8;  // padded pages are fine
  EXPECT_TRUE(IsOk(call.validate()));
}

TEST(ValidateSource, NegativePageStrideIsRejected) {
  Call call;
  call.args.sources[0].page_stride_bytes = -149760;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.sources[0].page_stride_bytes = -149760"}));
}

TEST(ValidateSource, NumPagesNonNegative) {
  Call call;
  call.args.sources[1].num_pages = -1;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.sources[1].num_pages = -1", ">= 0"}));
}

TEST(ValidateSource, NumPagesTimesPageStrideFitsInt64) {
  Call call;
  const int64_t stride = call.args.sources[1].page_stride_bytes;
  call.args.sources[1].num_pages = INT64_MAX / stride;
  EXPECT_TRUE(IsOk(call.validate()));
  call.args.sources[1].num_pages = INT64_MAX / stride + 1;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.sources[1].num_pages = ", "overflow int64"}));
  call.args.sources[1].num_pages = INT64_MAX;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.sources[1].num_pages = 9223372036854775807"}));
}

TEST(ValidateSource, IndicesRequiredAnd4ByteAligned) {
  Call call;
  call.args.sources[0].indices = nullptr;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.sources[0].indices = NULL", "num_rows > 0"}));
  call.args.sources[0].indices = fake_pointer<const int32_t>(2, 2);
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.sources[0].indices = 0x", "4-byte aligned"}));
}

TEST(ValidateSource, IndexRowStrideAtLeastWidth) {
  Call call;
  call.args.sources[1].index_row_stride = 511;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.sources[1].index_row_stride = 511",
                                          "must be >= problem.sources[1].width = 512"}));
  call.args.sources[1].index_row_stride = 1024;  // a wider table, partly used
  EXPECT_TRUE(IsOk(call.validate()));
  call.args.sources[1].index_row_stride = -512;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.sources[1].index_row_stride = -512"}));
}

TEST(ValidateSource, IndexTableFitsInt64Bytes) {
  Call call;
  call.args.sources[0].index_row_stride = INT64_MAX / 4;  // 4 rows of it
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.sources[0].index_row_stride = 2305843009213693951",
                                          "overflows int64"}));
  Call one_row(valid_problem(), 1);  // the stride is never stepped along
  one_row.args.sources[0].index_row_stride = INT64_MAX / 4;
  EXPECT_TRUE(IsOk(one_row.validate()));
}

TEST(ValidateSource, LengthsOptionalAnd4ByteAligned) {
  Call call;
  call.args.sources[0].lengths = nullptr;
  call.args.sources[1].lengths = nullptr;
  EXPECT_TRUE(IsOk(call.validate()));
  call.args.sources[1].lengths = fake_pointer<const int32_t>(6, 3);
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.sources[1].lengths = 0x", "4-byte aligned"}));
}

TEST(ValidateSource, UnusedSourceIsIgnored) {
  smla_problem problem = valid_problem();
  problem.num_sources = 1;
  Call call(problem);
  call.args.sources[1] = smla_source_args{};
  call.args.sources[1].num_pages = -7;
  call.args.sources[1].indices = fake_pointer<const int32_t>(5, 1);
  EXPECT_TRUE(IsOk(call.validate()));
}

TEST(ValidateSource, PageSize1AndWidth65536Pass) {
  smla_problem problem = valid_problem();
  problem.sources[1].page_size = 1;
  problem.sources[1].width = SMLA_MAX_WIDTH;
  ASSERT_TRUE(IsOk(validate_problem(&problem)));
  EXPECT_TRUE(IsOk(Call(problem).validate()));
}

}  // namespace
}  // namespace smla::validate_test
