// Every entry point of the C API answers NULL where a pointer is required with
// SMLA_ERR_INVALID_ARGUMENT and a message naming the parameter: nothing throws, nothing crashes.
#include <gtest/gtest.h>
#include <smla.h>

#include <string>

#include "cpu/codegen/dsv4_problems.h"

namespace smla {
namespace {

void expect_invalid(smla_status status, const std::string& named) {
  EXPECT_EQ(status, SMLA_ERR_INVALID_ARGUMENT) << smla_last_error();
  EXPECT_NE(std::string(smla_last_error()).find(named), std::string::npos) << smla_last_error();
}

TEST(NullArguments, AreInvalidArgumentsNamedInTheMessage) {
  const smla_problem problem = test::dsv4_window_problem(16);
  smla_args empty{};  // num_rows 0: valid with every pointer NULL
  const smla_varlen varlen{};
  size_t workspace = 0;
  {
    SCOPED_TRACE("no context");
    expect_invalid(smla_context_create(nullptr, nullptr), "ctx = NULL");
    expect_invalid(smla_prepare(nullptr, &problem, 1, &workspace), "ctx = NULL");
    expect_invalid(smla_decode(nullptr, &problem, &empty, nullptr, nullptr, 0, nullptr),
                   "ctx = NULL");
    expect_invalid(smla_prefill(nullptr, &problem, &empty, &varlen, nullptr, 0, nullptr),
                   "ctx = NULL");
    EXPECT_EQ(smla_context_destroy(nullptr), SMLA_OK);
    smla_options_init(nullptr);
    EXPECT_NE(smla_version(), nullptr);
  }
  smla_options options;
  smla_options_init(&options);
  options.cache_path = "";
  smla_context* context = nullptr;
  ASSERT_EQ(smla_context_create(&options, &context), SMLA_OK) << smla_last_error();
  {
    SCOPED_TRACE("a context, and a NULL argument");
    expect_invalid(smla_prepare(context, nullptr, 1, &workspace), "problem = NULL");
    expect_invalid(smla_prepare(context, &problem, 1, nullptr), "workspace_bytes = NULL");
    expect_invalid(smla_decode(context, nullptr, &empty, nullptr, nullptr, 0, nullptr),
                   "problem = NULL");
    expect_invalid(smla_decode(context, &problem, nullptr, nullptr, nullptr, 0, nullptr),
                   "args = NULL");
    expect_invalid(smla_prefill(context, &problem, &empty, nullptr, nullptr, 0, nullptr),
                   "varlen = NULL");
    expect_invalid(smla_decode(context, &problem, &empty, nullptr, nullptr, 16, nullptr),
                   "workspace = NULL");
    // Arguments first: with a bad argument and no varlen, prefill names the argument, as decode
    // does (a fuzzer input once had them disagree).
    smla_args rows = empty;
    rows.num_rows = 2;
    expect_invalid(smla_decode(context, &problem, &rows, nullptr, nullptr, 0, nullptr),
                   "args.q = NULL");
    expect_invalid(smla_prefill(context, &problem, &rows, nullptr, nullptr, 0, nullptr),
                   "args.q = NULL");
  }
  EXPECT_EQ(smla_context_destroy(context), SMLA_OK);
}

}  // namespace
}  // namespace smla
