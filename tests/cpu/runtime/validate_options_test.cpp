// validate_options: device, JIT policy, log level, target arch and batch-invariance mode of
// smla_context_create.
#include <string>

#include "validate_fixture.h"

namespace smla::validate_test {
namespace {

// The documented defaults, written out so this test needs nothing but validation.
smla_options default_options() {
  smla_options options{};
  options.device = 0;
  options.jit = SMLA_JIT_ALLOW;
  options.log_level = SMLA_LOG_WARN;
  options.batch_variant = 0;
  return options;
}

TEST(ValidateOptions, NullMeansDefaultsAndDefaultsAreValid) {
  EXPECT_TRUE(IsOk(validate_options(nullptr)));
  const smla_options options = default_options();
  EXPECT_TRUE(IsOk(validate_options(&options)));
}

// A zero-filled struct (`smla_options o = {0};` in C) is the defaults but for the log level: in
// particular the batch-invariant mode, not the faster one that gives up a row's bits.
TEST(ValidateOptions, ZeroFilledIsTheDefaultsButErrorsOnlyLogging) {
  const smla_options zero{};
  EXPECT_TRUE(IsOk(validate_options(&zero)));
  smla_options defaults;
  smla_options_init(&defaults);
  EXPECT_EQ(zero.device, defaults.device);
  EXPECT_EQ(zero.cache_path, defaults.cache_path);
  EXPECT_EQ(zero.system_cache_path, defaults.system_cache_path);
  EXPECT_EQ(zero.jit, defaults.jit);
  EXPECT_EQ(zero.log_level, SMLA_LOG_ERROR);
  EXPECT_EQ(zero.arch, defaults.arch);
  EXPECT_EQ(zero.batch_variant, defaults.batch_variant);
}

TEST(ValidateOptions, PathsAreNotChecked) {
  smla_options options = default_options();
  options.cache_path = "";
  options.system_cache_path = "/nonexistent/cache.sqlite";
  EXPECT_TRUE(IsOk(validate_options(&options)));
}

TEST(ValidateOptions, DeviceMustBeNonNegative) {
  smla_options options = default_options();
  options.device = 7;
  EXPECT_TRUE(IsOk(validate_options(&options)));
  options.device = -1;
  EXPECT_TRUE(IsInvalid(validate_options(&options), {"options.device = -1", ">= 0"}));
}

TEST(ValidateOptions, JitPolicyMustBeKnown) {
  smla_options options = default_options();
  options.jit = SMLA_JIT_FORBID;
  EXPECT_TRUE(IsOk(validate_options(&options)));
  for (int bad : {2, -1}) {
    store_enum_bits(&options.jit, bad);
    EXPECT_TRUE(IsInvalid(validate_options(&options), {"options.jit = " + std::to_string(bad)}));
  }
}

TEST(ValidateOptions, LogLevelMustBeKnown) {
  smla_options options = default_options();
  for (smla_log_level level : {SMLA_LOG_ERROR, SMLA_LOG_WARN, SMLA_LOG_INFO, SMLA_LOG_DEBUG}) {
    options.log_level = level;
    EXPECT_TRUE(IsOk(validate_options(&options))) << level;
  }
  for (int bad : {4, -1}) {
    store_enum_bits(&options.log_level, bad);
    EXPECT_TRUE(
        IsInvalid(validate_options(&options), {"options.log_level = " + std::to_string(bad)}));
  }
}

TEST(ValidateOptions, BatchVariantIsZeroOrOne) {
  smla_options options = default_options();
  options.batch_variant = 1;
  EXPECT_TRUE(IsOk(validate_options(&options)));
  for (int bad : {2, -1}) {
    options.batch_variant = bad;
    EXPECT_TRUE(IsInvalid(validate_options(&options),
                          {"options.batch_variant = " + std::to_string(bad), "0 or 1"}));
  }
}

TEST(ValidateOptions, ArchIsNullOrASupportedTarget) {
  smla_options options = default_options();
  for (const char* arch : {"sm_90a", "sm_100a", "sm_103a"}) {
    options.arch = arch;
    EXPECT_TRUE(IsOk(validate_options(&options))) << arch;
  }
  // Near misses: no "a" suffix, wrong case, trailing text, empty.
  for (const char* arch : {"sm_90", "SM_90A", "sm_100a ", "sm_80", ""}) {
    options.arch = arch;
    EXPECT_TRUE(IsInvalid(validate_options(&options),
                          {"options.arch = \"" + std::string(arch) + "\"", "sm_100a"}))
        << arch;
  }
}

TEST(ValidateOptions, BadArchIsQuotedEscapedAndTruncated) {
  smla_options options = default_options();
  options.arch = "sm_9\x01";
  EXPECT_TRUE(IsInvalid(validate_options(&options), {"options.arch = \"sm_9\\x01\""}));
  const std::string long_arch(1000, 'x');
  options.arch = long_arch.c_str();
  const Status status = validate_options(&options);
  EXPECT_TRUE(IsInvalid(status, {"options.arch = \"" + std::string(32, 'x') + "\":"}));
  EXPECT_LT(status.message().size(), 200u);
}

}  // namespace
}  // namespace smla::validate_test
