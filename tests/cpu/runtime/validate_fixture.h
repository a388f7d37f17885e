// Shared by the validate_*_test.cpp files: a valid problem and call that a test breaks one field
// at a time, and the checker that asserts on the status code and on pieces of the message.
//
// Device pointers are fake, correctly aligned addresses: validation checks them but never
// dereferences them, so nothing needs to be mapped (and ASan would catch a dereference).
#pragma once

#include <gtest/gtest.h>
#include <smla.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>

#include "runtime/validate.h"

namespace smla::validate_test {

// Buffers 4 GiB apart, each 256-byte aligned; add a small offset to misalign one. The call's
// outputs lie far below its inputs, lse below out, so that the huge extents some tests give an
// array never reach the next one (validate_args rejects outputs that overlap anything).
inline uintptr_t fake_address(int buffer) {
  if (buffer == 9) return uintptr_t{1} << 36;  // args.lse
  if (buffer == 8) return uintptr_t{1} << 37;  // args.out
  return 0x7f0000000000u + (uintptr_t{1} << 32) * buffer;
}

template <typename T>
T* fake_pointer(int buffer, uintptr_t misalign = 0) {
  return reinterpret_cast<T*>(fake_address(buffer) + misalign);
}

// Stores any int in an enum field, as a C caller can. Assigning an out-of-range value through the
// C++ enum type would itself be undefined behaviour.
template <typename Enum>
void store_enum_bits(Enum* field, int32_t bits) {
  static_assert(sizeof(Enum) == sizeof(bits), "C enums are int-sized");
  std::memcpy(field, &bits, sizeof bits);
}

// DeepSeek-V4-Flash CSA at TP 4: 16 heads, bf16 q, FlashMLA packed KV, a window source (page 256,
// width 128) and a compressed top-k source (page 64, width 512), sink and lse.
inline smla_problem valid_problem() {
  smla_problem problem{};
  problem.num_heads = 16;
  problem.q_dtype = SMLA_BF16;
  problem.kv_layout = SMLA_KV_FP8_PACKED;
  problem.q_len = 1;
  problem.num_sources = 2;
  problem.sources[0] = {SMLA_SOURCE_LIST, 256, 128, 0};
  problem.sources[1] = {SMLA_SOURCE_LIST, 64, 512, 0};
  problem.has_sink = 1;
  problem.want_lse = 1;
  return problem;
}

// Contiguous q and out, minimal page strides, tight index tables, per-row lengths.
inline smla_args valid_args(const smla_problem& problem, int num_rows = 4) {
  smla_args args{};
  args.num_rows = num_rows;
  args.q = fake_pointer<const void>(0);
  args.q_head_stride = SMLA_HEAD_DIM;
  args.q_row_stride = int64_t{problem.num_heads} * SMLA_HEAD_DIM;
  args.q_scale = 1.0f;
  for (int s = 0; s < problem.num_sources; ++s) {
    smla_source_args& source = args.sources[s];
    source.cache = fake_pointer<const void>(1 + 3 * s);
    source.page_stride_bytes =
        smla_min_page_stride(problem.kv_layout, problem.sources[s].page_size);
    source.num_pages = 1000;
    source.indices = fake_pointer<const int32_t>(2 + 3 * s);
    source.index_row_stride = problem.sources[s].width;
    source.lengths = fake_pointer<const int32_t>(3 + 3 * s);
  }
  args.kv_scale = 1.0f;
  args.sink = fake_pointer<const float>(7);
  args.softmax_scale = 0.044194173f;  // 1/sqrt(512)
  args.out = fake_pointer<void>(8);
  args.out_head_stride = SMLA_HEAD_DIM;
  args.out_row_stride = int64_t{problem.num_heads} * SMLA_HEAD_DIM;
  args.lse = fake_pointer<float>(9);
  return args;
}

// A valid decode call; tests change fields of `problem` (through the constructor) or `args`.
struct Call {
  explicit Call(const smla_problem& p = valid_problem(), int num_rows = 4)
      : problem(p), args(valid_args(p, num_rows)) {}
  Status validate() const { return validate_args(problem, &args); }

  smla_problem problem;
  smla_args args;
};

inline smla_problem with_q_dtype(smla_dtype q_dtype) {
  smla_problem problem = valid_problem();
  problem.q_dtype = q_dtype;
  return problem;
}

inline smla_problem with_kv_layout(smla_kv_layout kv_layout) {
  smla_problem problem = valid_problem();
  problem.kv_layout = kv_layout;
  return problem;
}

inline ::testing::AssertionResult IsOk(const Status& status) {
  if (status.is_ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "status " << status.code() << ": " << status.message();
}

// Passes when `status` is `code` and its message contains every piece of `pieces`.
inline ::testing::AssertionResult IsError(const Status& status, smla_status code,
                                          std::initializer_list<std::string> pieces) {
  if (status.code() != code) {
    return ::testing::AssertionFailure() << "status " << status.code() << " (wanted " << code
                                         << "): \"" << status.message() << "\"";
  }
  for (const std::string& piece : pieces) {
    if (status.message().find(piece) == std::string::npos) {
      return ::testing::AssertionFailure()
             << "message \"" << status.message() << "\" lacks \"" << piece << "\"";
    }
  }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult IsInvalid(const Status& status,
                                            std::initializer_list<std::string> pieces) {
  return IsError(status, SMLA_ERR_INVALID_ARGUMENT, pieces);
}

}  // namespace smla::validate_test
