// validate_args: row count, required pointers and their alignment, and the scales.
// Strides of q/out and the per-source fields have their own files.
#include <cmath>
#include <limits>
#include <string>

#include "validate_fixture.h"

namespace smla::validate_test {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(ValidateArgs, ValidCallPasses) {
  for (smla_dtype q_dtype : {SMLA_BF16, SMLA_FP8_E4M3}) {
    for (smla_kv_layout layout : {SMLA_KV_FP8_UNIFORM, SMLA_KV_FP8_PACKED, SMLA_KV_BF16}) {
      smla_problem problem = with_kv_layout(layout);
      problem.q_dtype = q_dtype;
      EXPECT_TRUE(IsOk(Call(problem).validate())) << q_dtype << " " << layout;
    }
  }
}

TEST(ValidateArgs, NullIsRejected) {
  EXPECT_TRUE(IsInvalid(validate_args(valid_problem(), nullptr), {"args = NULL"}));
}

TEST(ValidateArgs, NumRowsFrom0ToTheRowLimit) {
  EXPECT_TRUE(IsOk(Call(valid_problem(), 1).validate()));
  EXPECT_TRUE(IsOk(Call(valid_problem(), kMaxRows).validate()));
  for (int bad : {-1, kMaxRows + 1}) {
    Call call;
    call.args.num_rows = bad;
    EXPECT_TRUE(IsInvalid(call.validate(), {"args.num_rows = " + std::to_string(bad)}));
  }
}

TEST(ValidateArgs, ZeroRowsIgnoresEveryOtherField) {
  smla_args args{};  // every pointer NULL, every stride and scale 0
  args.softmax_scale = kNan;
  args.sources[0].num_pages = -1;
  EXPECT_TRUE(IsOk(validate_args(valid_problem(), &args)));
}

TEST(ValidateArgs, QIsRequiredAnd16ByteAligned) {
  Call call;
  call.args.q = nullptr;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.q = NULL: required when num_rows > 0"}));
  call.args.q = fake_pointer<const void>(0, 8);
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.q = 0x7f0000000008: must be 16-byte aligned"}));
  call.args.q = fake_pointer<const void>(0, 16);
  EXPECT_TRUE(IsOk(call.validate()));
}

TEST(ValidateArgs, OutIsRequiredAnd16ByteAligned) {
  Call call;
  call.args.out = nullptr;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.out = NULL", "required"}));
  call.args.out = fake_pointer<void>(8, 2);
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.out = 0x", "must be 16-byte aligned"}));
}

TEST(ValidateArgs, SinkRequiredOnlyWithHasSink) {
  Call call;
  call.args.sink = nullptr;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.sink = NULL", "problem.has_sink = 1"}));
  call.args.sink = fake_pointer<const float>(7, 2);
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.sink = 0x", "must be 4-byte aligned"}));
  call.args.sink = fake_pointer<const float>(7, 4);
  EXPECT_TRUE(IsOk(call.validate()));

  smla_problem problem = valid_problem();
  problem.has_sink = 0;
  Call without_sink(problem);
  without_sink.args.sink = fake_pointer<const float>(7, 1);  // ignored, like NULL
  EXPECT_TRUE(IsOk(without_sink.validate()));
}

TEST(ValidateArgs, LseRequiredOnlyWithWantLse) {
  Call call;
  call.args.lse = nullptr;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.lse = NULL", "problem.want_lse = 1"}));
  call.args.lse = fake_pointer<float>(9, 1);
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.lse = 0x", "must be 4-byte aligned"}));

  smla_problem problem = valid_problem();
  problem.want_lse = 0;
  Call without_lse(problem);
  without_lse.args.lse = nullptr;
  EXPECT_TRUE(IsOk(without_lse.validate()));
}

TEST(ValidateArgs, SoftmaxScaleFiniteAndPositive) {
  for (float bad : {kNan, kInf, -kInf, 0.0f, -0.0f, -0.04f}) {
    Call call;
    call.args.softmax_scale = bad;
    EXPECT_TRUE(IsInvalid(call.validate(), {"args.softmax_scale = ", "must be finite and > 0"}))
        << bad;
  }
  Call call;
  call.args.softmax_scale = 1e-30f;
  EXPECT_TRUE(IsOk(call.validate()));
}

// The kernels take the scales that apply as one float (times log2 e): its overflow is refused,
// naming the three; a scale that does not apply (q_scale for bf16 q) does not count.
TEST(ValidateArgs, ScalesTogetherStayFinite) {
  Call fp8(with_q_dtype(SMLA_FP8_E4M3));
  fp8.args.softmax_scale = 1e20f;
  fp8.args.q_scale = 1e20f;
  EXPECT_TRUE(IsInvalid(fp8.validate(),
                        {"args.softmax_scale = 1e+20, args.q_scale = 1e+20: the scales that "
                         "apply, multiplied, overflow float"}));
  fp8.args.q_scale = 1e10f;
  EXPECT_TRUE(IsOk(fp8.validate()));
  Call bf16(with_q_dtype(SMLA_BF16));
  bf16.args.softmax_scale = 1e20f;
  bf16.args.q_scale = 1e20f;
  EXPECT_TRUE(IsOk(bf16.validate()));
  Call uniform(with_kv_layout(SMLA_KV_FP8_UNIFORM));
  uniform.args.softmax_scale = 3e38f;
  uniform.args.kv_scale = 2.0f;
  uniform.args.q_scale = kNan;  // ignored for bf16 q, so not named either
  EXPECT_TRUE(IsInvalid(uniform.validate(),
                        {"args.softmax_scale = 3e+38, args.kv_scale = 2: the scales that apply"}));
}

TEST(ValidateArgs, QScaleCheckedOnlyForFp8Q) {
  for (float bad : {kNan, kInf, 0.0f, -1.0f}) {
    Call fp8(with_q_dtype(SMLA_FP8_E4M3));
    fp8.args.q_scale = bad;
    EXPECT_TRUE(IsInvalid(fp8.validate(), {"args.q_scale = ", "SMLA_FP8_E4M3"})) << bad;
    Call bf16(with_q_dtype(SMLA_BF16));
    bf16.args.q_scale = bad;
    EXPECT_TRUE(IsOk(bf16.validate())) << bad;
  }
  Call fp8(with_q_dtype(SMLA_FP8_E4M3));
  fp8.args.q_scale = 1e-40f;  // subnormal, still finite and > 0
  EXPECT_TRUE(IsOk(fp8.validate()));
}

TEST(ValidateArgs, QScaleMessageNamesTheValue) {
  Call fp8(with_q_dtype(SMLA_FP8_E4M3));
  fp8.args.q_scale = kNan;
  EXPECT_TRUE(IsInvalid(fp8.validate(), {"args.q_scale = nan"}));
  fp8.args.q_scale = -kInf;
  EXPECT_TRUE(IsInvalid(fp8.validate(), {"args.q_scale = -inf"}));
}

TEST(ValidateArgs, KvScaleCheckedOnlyForUniformLayout) {
  for (float bad : {kNan, -kInf, 0.0f, -2.0f}) {
    Call uniform(with_kv_layout(SMLA_KV_FP8_UNIFORM));
    uniform.args.kv_scale = bad;
    EXPECT_TRUE(IsInvalid(uniform.validate(), {"args.kv_scale = ", "SMLA_KV_FP8_UNIFORM"})) << bad;
    for (smla_kv_layout other : {SMLA_KV_FP8_PACKED, SMLA_KV_BF16}) {
      Call call(with_kv_layout(other));
      call.args.kv_scale = bad;
      EXPECT_TRUE(IsOk(call.validate())) << bad << " " << other;
    }
  }
}

TEST(ValidateArgs, FirstBadFieldInStructOrderIsReported) {
  Call call;
  call.args.q = nullptr;
  call.args.out = nullptr;
  call.args.softmax_scale = 0.0f;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.q = NULL"}));
}

}  // namespace
}  // namespace smla::validate_test
