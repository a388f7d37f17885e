// validate_args on the strides of q and out: non-negative, 16-byte aligned head vectors, no
// overlap between the [num_rows][num_heads] vectors of 512 elements, no int64 overflow.
#include <cstdint>
#include <string>

#include "validate_fixture.h"

namespace smla::validate_test {
namespace {

// 16 heads, 4 rows: contiguous is row 8192, head 512.
constexpr int64_t kRowStride = 16 * 512;

TEST(ValidateStrides, HeadMajorAndPaddedLayoutsPass) {
  Call call;
  call.args.q_head_stride = 4 * 512;  // [heads][rows][512]
  call.args.q_row_stride = 512;
  call.args.out_head_stride = 512;  // padded rows
  call.args.out_row_stride = kRowStride + 64;
  EXPECT_TRUE(IsOk(call.validate()));
}

TEST(ValidateStrides, NegativeStridesAreRejected) {
  Call call;
  call.args.q_row_stride = -kRowStride;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.q_row_stride = -8192", ">= 0"}));
  call = Call();
  call.args.out_head_stride = -512;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.out_head_stride = -512", ">= 0"}));
  // Even where the extent is 1 and the stride is never stepped along.
  call = Call(valid_problem(), 1);
  call.args.q_row_stride = -8;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.q_row_stride = -8"}));
}

TEST(ValidateStrides, Bf16StridesAreMultiplesOf8Elements) {
  Call call;
  call.args.q_row_stride = kRowStride + 8;
  EXPECT_TRUE(IsOk(call.validate()));
  call.args.q_row_stride = kRowStride + 4;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.q_row_stride = 8196", "multiple of 8 elements"}));
  call = Call();
  call.args.q_head_stride = 516;
  call.args.q_row_stride = 16 * 516;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.q_head_stride = 516", "multiple of 8"}));
}

TEST(ValidateStrides, Fp8QStridesAreMultiplesOf16Elements) {
  Call call(with_q_dtype(SMLA_FP8_E4M3));
  call.args.q_row_stride = kRowStride + 16;
  EXPECT_TRUE(IsOk(call.validate()));
  call.args.q_row_stride = kRowStride + 8;  // fine for bf16, 8 bytes off for fp8
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.q_row_stride = 8200", "multiple of 16 elements"}));
}

TEST(ValidateStrides, OutIsBf16WhateverTheQDtype) {
  Call call(with_q_dtype(SMLA_FP8_E4M3));
  call.args.out_row_stride = kRowStride + 8;
  EXPECT_TRUE(IsOk(call.validate()));
  call.args.out_row_stride = kRowStride + 12;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.out_row_stride = 8204", "multiple of 8"}));
}

TEST(ValidateStrides, StrideOfExtent1IsFree) {
  Call one_row(valid_problem(), 1);
  one_row.args.q_row_stride = 3;  // never stepped along
  one_row.args.out_row_stride = 0;
  EXPECT_TRUE(IsOk(one_row.validate()));

  smla_problem problem = valid_problem();
  problem.num_heads = 1;
  Call one_head(problem);
  one_head.args.q_head_stride = 0;
  one_head.args.q_row_stride = 512;
  one_head.args.out_head_stride = 7;
  one_head.args.out_row_stride = 512;
  EXPECT_TRUE(IsOk(one_head.validate()));
}

TEST(ValidateStrides, HeadVectorsOverlapping) {
  Call call;
  call.args.q_head_stride = 256;
  EXPECT_TRUE(
      IsInvalid(call.validate(), {"args.q_head_stride = 256", "must be >= 512", "do not overlap"}));
  call = Call();
  call.args.out_head_stride = 0;  // every head written to the same vector
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.out_head_stride = 0", "overlap"}));
}

TEST(ValidateStrides, RowsOverlappingTheHeadsOfTheRowBefore) {
  Call call;
  call.args.out_row_stride = kRowStride - 8;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.out_row_stride = 8184", "must be >= 8192",
                                          "args.out_head_stride = 512 times 15", "overlap"}));
  call = Call();
  call.args.q_row_stride = call.args.q_head_stride;  // equal strides
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.q_", "overlap"}));
}

TEST(ValidateStrides, OverlapFoundWhicheverStrideIsLarger) {
  // Head-major: heads are the outer dimension, so the head stride must clear all 4 rows.
  Call call;
  call.args.q_row_stride = 512;
  call.args.q_head_stride = 3 * 512;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.q_head_stride = 1536", "must be >= 2048"}));
}

TEST(ValidateStrides, OneSteppedDimensionNeedsOnly512) {
  Call one_row(valid_problem(), 1);
  one_row.args.q_head_stride = 512;
  one_row.args.q_row_stride = 0;
  EXPECT_TRUE(IsOk(one_row.validate()));
  one_row.args.q_head_stride = 504;
  EXPECT_TRUE(IsInvalid(one_row.validate(), {"args.q_head_stride = 504", "overlap"}));
}

TEST(ValidateStrides, InterleavedLayoutsAreConservativelyRejected) {
  // Offsets {0, 1024, 2048} + {0, 1536}: no two vectors overlap, but the inner dimension does not
  // fit in one step of the outer one. Documented as rejected.
  smla_problem problem = valid_problem();
  problem.num_heads = 3;
  Call call(problem, 2);
  call.args.q_head_stride = 1024;
  call.args.q_row_stride = 1536;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.q_row_stride = 1536", "overlap"}));
}

TEST(ValidateStrides, HugeStridesOverflowInt64) {
  Call call;
  call.args.q_row_stride = INT64_MAX / 2 - 7;  // a multiple of 8; 3 steps overflow
  EXPECT_TRUE(IsInvalid(call.validate(),
                        {"args.q_row_stride = ", "args.q_head_stride = 512", "overflows int64"}));
  call = Call();
  call.args.out_head_stride = int64_t{1} << 60;
  EXPECT_TRUE(IsInvalid(call.validate(),
                        {"args.out_head_stride = 1152921504606846976", "overflows int64"}));
}

TEST(ValidateStrides, OverflowCountsElementBytes) {
  // Two rows 2^62 elements apart: fits in int64 bytes for fp8 q, twice that for bf16 does not.
  const int64_t stride = int64_t{1} << 62;
  Call fp8(with_q_dtype(SMLA_FP8_E4M3), 2);
  fp8.args.q_row_stride = stride;
  EXPECT_TRUE(IsOk(fp8.validate()));
  Call bf16(with_q_dtype(SMLA_BF16), 2);
  bf16.args.q_row_stride = stride;
  EXPECT_TRUE(
      IsInvalid(bf16.validate(), {"args.q_row_stride = 4611686018427387904", "overflows int64"}));
}

}  // namespace
}  // namespace smla::validate_test
