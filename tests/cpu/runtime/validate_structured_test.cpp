// Window and prefix sources: their block tables and the varlen description they read positions
// from (docs/semantics.md, "Structured sources").
#include <cstdint>
#include <string>
#include <vector>

#include "validate_fixture.h"

namespace smla::validate_test {
namespace {

// DeepSeek-V4 HCA at one chunk: a window (width 128, pages of 256) and a prefix (ratio 128, pages
// of 2, width 64), two requests of 3 and 5 rows at 300 and 8192 tokens.
struct Structured {
  Structured() {
    call.problem.sources[0] = {SMLA_SOURCE_WINDOW, 256, 128, 0};
    call.problem.sources[1] = {SMLA_SOURCE_PREFIX, 2, 64, 128};
    call.args = valid_args(call.problem, 8);
    for (smla_source_args& source : call.args.sources) {
      source.lengths = nullptr;
      source.index_row_stride = 32;
    }
    varlen = {2, cu_seqlens_q.data(), kv_lens.data(), fake_pointer<const int32_t>(10),
              fake_pointer<const int32_t>(11)};
  }
  Status validate() const { return validate_args(call.problem, &call.args, &varlen); }

  Call call;
  std::vector<int32_t> cu_seqlens_q = {0, 3, 8};
  std::vector<int32_t> kv_lens = {300, 8192};
  smla_varlen varlen{};
};

TEST(ValidateStructured, ValidCallPasses) {
  const Structured call;
  ASSERT_TRUE(IsOk(validate_problem(&call.call.problem)));
  EXPECT_TRUE(IsOk(call.validate()));
}

TEST(ValidateStructured, VarlenRequired) {
  const Structured call;
  EXPECT_TRUE(IsInvalid(validate_args(call.call.problem, &call.call.args, nullptr),
                        {"varlen = NULL", "problem.sources[0].kind is SMLA_SOURCE_WINDOW"}));
  Structured prefix_only;
  prefix_only.call.problem.sources[0] = valid_problem().sources[0];  // a list: checked first
  prefix_only.call.args.sources[0].index_row_stride = 128;
  EXPECT_TRUE(IsInvalid(validate_args(prefix_only.call.problem, &prefix_only.call.args, nullptr),
                        {"varlen = NULL", "problem.sources[1].kind is SMLA_SOURCE_PREFIX"}));
}

TEST(ValidateStructured, ArgumentsBeforeTheStructuredSourceComeFirst) {
  // q is checked before the window's varlen, as in a call of list sources; what follows the
  // window (here the prefix's table) after it.
  Structured call;
  call.call.args.q = nullptr;
  call.varlen.device_kv_lens = nullptr;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.q = NULL"}));
  call.call.args.q = valid_args(call.call.problem).q;
  EXPECT_TRUE(IsInvalid(call.validate(), {"varlen.device_kv_lens = NULL"}));
}

TEST(ValidateStructured, DeviceArraysRequiredAndAligned) {
  Structured call;
  call.varlen.device_cu_seqlens_q = nullptr;
  EXPECT_TRUE(IsInvalid(call.validate(), {"varlen.device_cu_seqlens_q = NULL", "SMLA_SOURCE"}));
  call.varlen.device_cu_seqlens_q = fake_pointer<const int32_t>(10, 2);
  EXPECT_TRUE(IsInvalid(call.validate(), {"varlen.device_cu_seqlens_q = 0x", "4-byte aligned"}));
  call = Structured();
  call.varlen.device_kv_lens = nullptr;
  EXPECT_TRUE(IsInvalid(call.validate(), {"varlen.device_kv_lens = NULL"}));
}

TEST(ValidateStructured, ListProblemsNeedNoDeviceArrays) {
  Call list;
  const std::vector<int32_t> cu = {0, 4}, kv = {4};
  const smla_varlen varlen{1, cu.data(), kv.data(), nullptr, nullptr};
  EXPECT_TRUE(IsOk(validate_args(list.problem, &list.args, &varlen)));
}

TEST(ValidateStructured, LengthsMustBeNull) {
  Structured call;
  call.call.args.sources[1].lengths = fake_pointer<const int32_t>(6);
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.sources[1].lengths = 0x",
                                          "must be NULL for a SMLA_SOURCE_PREFIX source"}));
}

TEST(ValidateStructured, BlockTableStrideAtLeastOne) {
  Structured call;
  call.call.args.sources[0].index_row_stride = 0;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.sources[0].index_row_stride = 0", ">= 1"}));
}

TEST(ValidateStructured, BlockTableHoldsEveryPageARequestReads) {
  // Request 1's window reaches token 8191: page 31 of 256 tokens, so 32 columns.
  Structured call;
  call.call.args.sources[0].index_row_stride = 31;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.sources[0].index_row_stride = 31", "request 1",
                                          "varlen.kv_lens[1] = 8192", "reads 32 block-table"}));
  // Its prefix: 8192 / 128 = 64 entries in pages of 2, so 32 columns too.
  call = Structured();
  call.call.args.sources[1].index_row_stride = 31;
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.sources[1].index_row_stride = 31", "reads 32"}));
}

TEST(ValidateStructured, RequestsWithoutRowsReadNoColumns) {
  Structured call;
  call.cu_seqlens_q = {0, 0, 8};
  call.kv_lens = {1 << 30, 8192};  // request 0 has no rows: its length names no pages
  call.varlen.cu_seqlens_q = call.cu_seqlens_q.data();
  call.varlen.kv_lens = call.kv_lens.data();
  EXPECT_TRUE(IsOk(call.validate()));
}

TEST(ValidateStructured, PrefixWithinItsWidth) {
  Structured call;
  call.call.args.sources[0].index_row_stride = 33;  // the window's 8320 tokens
  call.kv_lens[1] = 8192 + 128;                     // 65 entries of ratio 128, width 64
  EXPECT_TRUE(IsInvalid(call.validate(), {"varlen.kv_lens[1] = 8320", "65 entries of ratio 128",
                                          "problem.sources[1].width = 64"}));
  call.kv_lens[1] = 8192 + 127;  // still 64 entries
  EXPECT_TRUE(IsOk(call.validate()));
}

TEST(ValidateStructured, IndicesFitInt32) {
  // 2^30 pages of 2 tokens is 2^31 indices, one past what int32 holds.
  Structured call;
  call.call.args.sources[1].num_pages = int64_t{1} << 30;
  EXPECT_TRUE(IsInvalid(call.validate(),
                        {"args.sources[1].num_pages = 1073741824", "exceed the 2^31 - 1 indices"}));
  call.call.args.sources[1].num_pages = (int64_t{1} << 30) - 1;
  EXPECT_TRUE(IsOk(call.validate()));
}

TEST(ValidateStructured, BlockTableTokensFitInt32) {
  // 2 requests of 2^22 columns of 256-token pages: 2^31 tokens, one past what int32 holds.
  Structured call;
  call.call.args.sources[0].index_row_stride = int64_t{1} << 22;
  EXPECT_TRUE(IsInvalid(call.validate(),
                        {"args.sources[0].index_row_stride = 4194304",
                         "2 requests of 4194304 columns of 256-token pages", "2^31 - 1 tokens"}));
  call.call.args.sources[0].index_row_stride = (int64_t{1} << 22) - 1;
  EXPECT_TRUE(IsOk(call.validate()));
}

TEST(ValidateStructured, VarlenFieldsChecked) {
  // The varlen checks of every call apply (validate_varlen_test.cpp covers each).
  Structured call;
  call.kv_lens[1] = 4;
  EXPECT_TRUE(IsInvalid(call.validate(), {"varlen.kv_lens[1] = 4", "5 rows"}));
}

TEST(ValidateStructured, BlockTableSizedByRequests) {
  // A block table spans num_requests * index_row_stride entries (here 2 * 32): an output on its
  // last 16 bytes overlaps it, one just past its end does not.
  const auto out_at = [](const Structured& call, int entry) {
    return const_cast<int32_t*>(call.call.args.sources[0].indices) + entry;
  };
  Structured call;
  call.call.args.out = out_at(call, 2 * 32 - 4);
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.out", "args.sources[0].indices"}));
  call.call.args.out = out_at(call, 2 * 32);
  EXPECT_TRUE(IsOk(call.validate()));
}

}  // namespace
}  // namespace smla::validate_test
