// With compiling forbidden (options.jit = SMLA_JIT_FORBID, or SMLA_JIT=0 in the environment)
// and a kernel in no cache, smla_prepare is SMLA_ERR_NOT_READY and names the missing kernel, so
// an operator knows what `smla cache build` left out.
#include <string>

#include "context_fixture.h"

namespace smla::context_test {
namespace {

using ContextJitForbidden = NoGpuContextTest;

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

TEST_F(ContextJitForbidden, ByOptions) {
  check_not_ready(compile_only_options("", SMLA_JIT_FORBID));
}

TEST_F(ContextJitForbidden, ByEnvironment) {
  ScopedEnv jit("SMLA_JIT", "0");
  check_not_ready(compile_only_options("", SMLA_JIT_ALLOW));
}

}  // namespace
}  // namespace smla::context_test
