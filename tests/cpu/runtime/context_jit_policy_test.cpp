// The JIT policy of a context: with compiling forbidden (options.jit = SMLA_JIT_FORBID, or
// SMLA_JIT=0 in the environment) and a kernel in no cache, smla_prepare is SMLA_ERR_NOT_READY and
// names the missing kernel, so an operator knows what `smla cache build` left out. SMLA_JIT=1
// allows compiling over the option; any other value is ignored with a warning (a typo such as
// SMLA_JIT=off must not switch compiling on).
#include <string>

#include "context_fixture.h"

namespace smla::context_test {
namespace {

using ContextJitPolicy = NoGpuContextTest;

void check_not_ready(const smla_options& options) {
  ContextPtr context = create_context(&options);
  ASSERT_NE(context, nullptr);
  const smla_problem problem = split_problem();
  size_t workspace = 0;
  EXPECT_EQ(smla_prepare(context.get(), &problem, 64, &workspace), SMLA_ERR_NOT_READY);
  const std::string message = smla_last_error();
  EXPECT_NE(message.find(default_decode_key(problem).text()), std::string::npos) << message;
  EXPECT_NE(message.find("not allowed"), std::string::npos) << message;
}

TEST_F(ContextJitPolicy, ForbiddenByOptions) {
  check_not_ready(compile_only_options("", SMLA_JIT_FORBID));
}

TEST_F(ContextJitPolicy, ForbiddenByEnvironment) {
  ScopedEnv jit("SMLA_JIT", "0");
  check_not_ready(compile_only_options("", SMLA_JIT_ALLOW));
}

TEST_F(ContextJitPolicy, AllowedByEnvironmentOverTheOption) {
  ScopedEnv jit("SMLA_JIT", "1");
  const smla_options options = compile_only_options("", SMLA_JIT_FORBID);
  ContextPtr context = create_context(&options);
  ASSERT_NE(context, nullptr);
  const smla_problem problem = split_problem();
  size_t workspace = 0;
  EXPECT_EQ(smla_prepare(context.get(), &problem, 64, &workspace), SMLA_OK) << smla_last_error();
}

TEST_F(ContextJitPolicy, OtherValuesAreIgnoredWithAWarning) {
  for (const char* value : {"off", "yes", "", "01", "true"}) {
    SCOPED_TRACE(value);
    ScopedEnv jit("SMLA_JIT", value);
    testing::internal::CaptureStderr();
    check_not_ready(compile_only_options("", SMLA_JIT_FORBID));
    const std::string warnings = testing::internal::GetCapturedStderr();
    EXPECT_NE(warnings.find(std::string("ignoring SMLA_JIT=") + value + ": expected 0 or 1"),
              std::string::npos)
        << warnings;
  }
}

}  // namespace
}  // namespace smla::context_test
