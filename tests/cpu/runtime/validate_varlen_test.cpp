// The varlen description's host arrays (cu_seqlens_q, kv_lens), checked by validate_args
// whenever one is given, and prefill's requirement of one.
#include <cstdint>
#include <string>
#include <vector>

#include "validate_fixture.h"

namespace smla::validate_test {
namespace {

// Three requests of 3, 0 and 5 rows (8 rows in all).
struct Prefill {
  Prefill() {
    varlen.num_requests = 3;
    varlen.cu_seqlens_q = cu_seqlens_q.data();
    varlen.kv_lens = kv_lens.data();
  }
  Status validate() const { return validate_args(call.problem, &call.args, &varlen); }

  Call call{valid_problem(), 8};
  std::vector<int32_t> cu_seqlens_q = {0, 3, 3, 8};
  std::vector<int32_t> kv_lens = {3, 100, 4096};
  smla_varlen varlen{};
};

TEST(ValidateVarlen, ValidPrefillPasses) {
  Prefill prefill;
  ASSERT_TRUE(IsOk(prefill.call.validate()));
  EXPECT_TRUE(IsOk(prefill.validate()));
}

TEST(ValidateVarlen, NullIsRejected) {
  // A required argument of smla_prefill, even with no rows.
  EXPECT_TRUE(IsInvalid(require_varlen(nullptr), {"varlen = NULL"}));
  const smla_varlen varlen{};
  EXPECT_TRUE(IsOk(require_varlen(&varlen)));
  // smla_decode of list sources needs none.
  const Call call;
  EXPECT_TRUE(IsOk(validate_args(call.problem, &call.args, nullptr)));
}

TEST(ValidateVarlen, ZeroRowsIgnoresTheFields) {
  const smla_varlen varlen{};  // no requests, NULL arrays
  const Call call(valid_problem(), 0);
  EXPECT_TRUE(IsOk(validate_args(call.problem, &call.args, &varlen)));
}

TEST(ValidateVarlen, AtLeastOneRequest) {
  for (int bad : {0, -1}) {
    Prefill prefill;
    prefill.varlen.num_requests = bad;
    EXPECT_TRUE(
        IsInvalid(prefill.validate(), {"varlen.num_requests = " + std::to_string(bad), ">= 1"}));
  }
}

TEST(ValidateVarlen, NoMoreRequestsThanRows) {
  Prefill prefill;
  prefill.call.args.num_rows = 2;
  prefill.varlen.num_requests = 3;
  EXPECT_TRUE(
      IsInvalid(prefill.validate(), {"varlen.num_requests = 3", "must be <= args.num_rows = 2"}));
}

TEST(ValidateVarlen, CuSeqlensRequiredAndAligned) {
  Prefill prefill;
  prefill.varlen.cu_seqlens_q = nullptr;
  EXPECT_TRUE(IsInvalid(prefill.validate(), {"varlen.cu_seqlens_q = NULL"}));
  prefill.varlen.cu_seqlens_q = fake_pointer<const int32_t>(0, 2);  // rejected before any read
  EXPECT_TRUE(IsInvalid(prefill.validate(), {"varlen.cu_seqlens_q = 0x", "4-byte aligned"}));
}

TEST(ValidateVarlen, CuSeqlensStartsAtZero) {
  Prefill prefill;
  prefill.cu_seqlens_q = {1, 3, 3, 8};
  prefill.varlen.cu_seqlens_q = prefill.cu_seqlens_q.data();
  EXPECT_TRUE(IsInvalid(prefill.validate(), {"varlen.cu_seqlens_q[0] = 1", "must be 0"}));
}

TEST(ValidateVarlen, CuSeqlensNonDecreasing) {
  Prefill prefill;
  prefill.cu_seqlens_q = {0, 5, 3, 8};
  prefill.varlen.cu_seqlens_q = prefill.cu_seqlens_q.data();
  EXPECT_TRUE(IsInvalid(prefill.validate(),
                        {"varlen.cu_seqlens_q[2] = 3", "must be >= varlen.cu_seqlens_q[1] = 5"}));
  // A drop at the last entry, which itself equals num_rows.
  prefill.cu_seqlens_q = {0, 3, 9, 8};
  prefill.varlen.cu_seqlens_q = prefill.cu_seqlens_q.data();
  EXPECT_TRUE(IsInvalid(prefill.validate(),
                        {"varlen.cu_seqlens_q[3] = 8", "must be >= varlen.cu_seqlens_q[2] = 9"}));
}

TEST(ValidateVarlen, CuSeqlensEndsAtNumRows) {
  for (int32_t last : {7, 9}) {
    Prefill prefill;
    prefill.cu_seqlens_q[3] = last;
    EXPECT_TRUE(IsInvalid(prefill.validate(), {"varlen.cu_seqlens_q[3] = " + std::to_string(last),
                                               "must equal args.num_rows = 8"}));
  }
}

TEST(ValidateVarlen, KvLensRequiredAndAtLeastTheNewRows) {
  Prefill prefill;
  prefill.varlen.kv_lens = nullptr;
  EXPECT_TRUE(IsInvalid(prefill.validate(), {"varlen.kv_lens = NULL"}));
  prefill.varlen.kv_lens = prefill.kv_lens.data();
  prefill.kv_lens[1] = -1;  // a request without rows
  EXPECT_TRUE(
      IsInvalid(prefill.validate(), {"varlen.kv_lens[1] = -1", "must be >= the request's 0 rows"}));
  prefill.kv_lens[1] = 0;
  EXPECT_TRUE(IsOk(prefill.validate()));
  prefill.kv_lens[2] = 4;  // 5 new rows cannot sit in 4 tokens
  EXPECT_TRUE(
      IsInvalid(prefill.validate(), {"varlen.kv_lens[2] = 4", "must be >= the request's 5 rows"}));
  prefill.kv_lens[2] = 5;  // no cached prefix
  EXPECT_TRUE(IsOk(prefill.validate()));
}

TEST(ValidateVarlen, ListCallsCheckItAfterEveryArgument) {
  // As smla_prefill checked it before window and prefix sources existed: a bad argument is
  // reported the same as by smla_decode, which takes no varlen here.
  Prefill prefill;
  prefill.call.args.out = nullptr;
  prefill.varlen.num_requests = 0;
  EXPECT_TRUE(IsInvalid(prefill.validate(), {"args.out = NULL"}));
}

TEST(ValidateVarlen, ReadsOnlyNumRequestsEntries) {
  // One request: only cu[0..1] and kv_lens[0] exist, as ASan checks.
  Prefill prefill;
  prefill.cu_seqlens_q = {0, 8};
  prefill.kv_lens = {10};
  prefill.varlen = {1, prefill.cu_seqlens_q.data(), prefill.kv_lens.data(), nullptr, nullptr};
  EXPECT_TRUE(IsOk(prefill.validate()));
}

}  // namespace
}  // namespace smla::validate_test
