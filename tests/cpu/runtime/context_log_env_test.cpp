// SMLA_LOG overrides options.log_level with error|warn|info|debug; any other value is ignored
// with one warning, and the context is still created (a typo in a launch script must not take
// a server down).
#include <string>

#include "context_fixture.h"

namespace smla::context_test {
namespace {

using ContextLogEnv = NoGpuContextTest;

// What creating (and destroying) a memory-only context writes to stderr with SMLA_LOG=`value`.
std::string creation_log(const char* value, smla_log_level option_level) {
  ScopedEnv log("SMLA_LOG", value);
  smla_options options = compile_only_options("");
  options.log_level = option_level;
  ::testing::internal::CaptureStderr();
  { ContextPtr context = create_context(&options); }
  return ::testing::internal::GetCapturedStderr();
}

TEST_F(ContextLogEnv, BadValueWarnsAndKeepsTheOption) {
  {
    SCOPED_TRACE("bogus: one warning, options.log_level stays in force");
    const std::string log = creation_log("bogus", SMLA_LOG_WARN);
    EXPECT_NE(log.find("smla warn: ignoring SMLA_LOG=bogus"), std::string::npos) << log;
    EXPECT_EQ(log.find("smla info:"), std::string::npos) << log;
    EXPECT_EQ(log.find('\n'), log.size() - 1) << log;
  }
  {
    SCOPED_TRACE("wrong case is a bad value too");
    EXPECT_NE(creation_log("INFO", SMLA_LOG_WARN).find("ignoring SMLA_LOG=INFO"),
              std::string::npos);
  }
}

TEST_F(ContextLogEnv, ValidValueOverridesTheOption) {
  // A context without a device reports at info level what it compiles for.
  EXPECT_NE(creation_log("info", SMLA_LOG_ERROR).find("smla info: no GPU"), std::string::npos);
  EXPECT_NE(creation_log("debug", SMLA_LOG_WARN).find("smla info: no GPU"), std::string::npos);
  EXPECT_EQ(creation_log("error", SMLA_LOG_INFO), "");
  EXPECT_NE(creation_log(nullptr, SMLA_LOG_INFO).find("smla info: no GPU"), std::string::npos);
}

}  // namespace
}  // namespace smla::context_test
