// Without a GPU (no libcuda here), a context is still created, with defaults or with options;
// with no options.arch it has nothing to compile for, so smla_prepare is SMLA_ERR_NO_DEVICE
// with a message saying so, after validating its arguments.
#include <string>

#include "context_fixture.h"

namespace smla::context_test {
namespace {

using ContextWithoutDevice = NoGpuContextTest;

TEST_F(ContextWithoutDevice, DefaultsCreateAContext) {
  TempDir home;  // the default cache lands in $XDG_CACHE_HOME/smla, not in the user's cache
  ScopedEnv xdg("XDG_CACHE_HOME", home.path().c_str());
  ContextPtr context = create_context(nullptr);
  EXPECT_NE(context, nullptr);
}

TEST_F(ContextWithoutDevice, PrepareWithoutArchIsNoDevice) {
  smla_options options;
  smla_options_init(&options);
  options.cache_path = "";
  ContextPtr context = create_context(&options);
  ASSERT_NE(context, nullptr);
  const smla_problem problem = split_problem();
  size_t workspace = 123;
  EXPECT_EQ(smla_prepare(context.get(), &problem, 16, &workspace), SMLA_ERR_NO_DEVICE);
  const std::string message = smla_last_error();
  EXPECT_NE(message.find("no GPU"), std::string::npos) << message;
  EXPECT_NE(message.find("options.arch"), std::string::npos) << message;
  EXPECT_EQ(workspace, 123u);
  {
    SCOPED_TRACE("validation comes first");
    smla_problem invalid = problem;
    invalid.sources[1].width = 0;
    EXPECT_EQ(smla_prepare(context.get(), &invalid, 16, &workspace), SMLA_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(smla_last_error()).find("sources[1].width = 0"), std::string::npos)
        << smla_last_error();
    EXPECT_EQ(smla_prepare(context.get(), &problem, 0, &workspace), SMLA_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(smla_prepare(context.get(), &problem, 16, nullptr), SMLA_ERR_INVALID_ARGUMENT);
  }
}

}  // namespace
}  // namespace smla::context_test
