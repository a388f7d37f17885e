// context_settings: the options with the operator's switches applied, read once when a context
// is made. Each switch overrides its option; a value outside its set is ignored with a warning;
// the retired SMLA_BATCH_INVARIANT is ignored with a warning naming its replacement; a SMLA_TILE
// that is no tile is INVALID_ARGUMENT. A context keeps what it was made with: the environment
// changing afterwards changes nothing.
#include "runtime/context_settings.h"

#include <gtest/gtest.h>

#include <string>

#include "context_fixture.h"
#include "runtime/context.h"

namespace smla::context_test {
namespace {

struct Read {
  Status status;
  ContextSettings settings;
  std::string warnings;
};

Read read_settings(const smla_options* options) {
  Read read;
  Logger log;
  testing::internal::CaptureStderr();
  read.status = context_settings(options, &log, &read.settings);
  read.warnings = testing::internal::GetCapturedStderr();
  return read;
}

class ContextSettingsTest : public ::testing::Test {
 private:
  test::ClearedSmlaEnvironment environment_;
};

TEST_F(ContextSettingsTest, TheOptionsWithoutAnEnvironment) {
  smla_options options;
  smla_options_init(&options);
  options.cache_path = "/tmp/a.sqlite";
  options.system_cache_path = "/tmp/b.sqlite";
  options.jit = SMLA_JIT_FORBID;
  options.batch_variant = 1;
  options.arch = "sm_120a";
  const Read read = read_settings(&options);
  ASSERT_TRUE(read.status) << read.status.message();
  EXPECT_EQ(read.settings.store.path, "/tmp/a.sqlite");
  EXPECT_EQ(read.settings.store.system_path, "/tmp/b.sqlite");
  EXPECT_FALSE(read.settings.jit_allowed);
  EXPECT_TRUE(read.settings.plan.batch_variant);
  EXPECT_EQ(read.settings.arch, "sm_120a");
  EXPECT_TRUE(read.settings.use_tuning);
  EXPECT_FALSE(read.settings.plan.forced_tile.has_value());
  EXPECT_EQ(read.warnings, "");
  const Read defaults = read_settings(nullptr);
  ASSERT_TRUE(defaults.status);
  EXPECT_TRUE(defaults.settings.jit_allowed);
  EXPECT_FALSE(defaults.settings.plan.batch_variant);
  EXPECT_EQ(defaults.settings.arch, "");
}

TEST_F(ContextSettingsTest, SwitchesOverrideTheOptions) {
  smla_options options;
  smla_options_init(&options);
  options.batch_variant = 1;
  ScopedEnv cache("SMLA_CACHE", "");
  ScopedEnv jit("SMLA_JIT", "0");
  ScopedEnv mode("SMLA_BATCH_VARIANT", "0");
  ScopedEnv tuning("SMLA_TUNING", "0");
  ScopedEnv tile("SMLA_TILE", "hg16.w8.te32.st3.seg5.mb1.mma_sync");
  const Read read = read_settings(&options);
  ASSERT_TRUE(read.status) << read.status.message();
  EXPECT_EQ(read.settings.store.path, "");
  EXPECT_FALSE(read.settings.jit_allowed);
  EXPECT_FALSE(read.settings.plan.batch_variant);
  EXPECT_FALSE(read.settings.use_tuning);
  ASSERT_TRUE(read.settings.plan.forced_tile.has_value());
  EXPECT_EQ(read.settings.plan.forced_tile->text(), "hg16.w8.te32.st3.seg5.mb1.mma_sync");
}

TEST_F(ContextSettingsTest, ValuesOutsideTheirSetAreIgnoredWithAWarning) {
  smla_options options;
  smla_options_init(&options);
  options.batch_variant = 1;
  ScopedEnv mode("SMLA_BATCH_VARIANT", "yes");
  ScopedEnv tuning("SMLA_TUNING", "off");
  const Read read = read_settings(&options);
  ASSERT_TRUE(read.status);
  EXPECT_TRUE(read.settings.plan.batch_variant);
  EXPECT_TRUE(read.settings.use_tuning);
  EXPECT_NE(read.warnings.find("ignoring SMLA_BATCH_VARIANT=yes: expected 0 or 1"),
            std::string::npos)
      << read.warnings;
  EXPECT_NE(read.warnings.find("ignoring SMLA_TUNING=off"), std::string::npos) << read.warnings;
}

TEST_F(ContextSettingsTest, TheRetiredBatchInvariantSwitchIsIgnoredAndNamed) {
  ScopedEnv retired("SMLA_BATCH_INVARIANT", "0");
  const Read read = read_settings(nullptr);
  ASSERT_TRUE(read.status);
  EXPECT_FALSE(read.settings.plan.batch_variant);
  EXPECT_NE(read.warnings.find("ignoring SMLA_BATCH_INVARIANT: the switch is SMLA_BATCH_VARIANT"),
            std::string::npos)
      << read.warnings;
}

TEST_F(ContextSettingsTest, ASmlaTileThatIsNoTileFailsTheContext) {
  ScopedEnv tile("SMLA_TILE", "fast");
  const Read read = read_settings(nullptr);
  EXPECT_EQ(read.status.code(), SMLA_ERR_INVALID_ARGUMENT);
  EXPECT_NE(read.status.message().find("SMLA_TILE = \"fast\""), std::string::npos)
      << read.status.message();
  smla_context* context = nullptr;
  EXPECT_EQ(smla_context_create(nullptr, &context), SMLA_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(context, nullptr);
  EXPECT_NE(std::string(smla_last_error()).find("SMLA_TILE"), std::string::npos);
}

// The mode is read when the context is made: flipping the switch later changes nothing.
TEST_F(ContextSettingsTest, AContextKeepsWhatItWasMadeWith) {
  if (machine_has_gpu()) GTEST_SKIP() << "these contexts compile without a device";
  const smla_options options = compile_only_options("");
  std::unique_ptr<Context> context;
  {
    ScopedEnv mode("SMLA_BATCH_VARIANT", "1");
    ASSERT_TRUE(Context::create(&options, &context));
  }
  const smla_problem problem = split_problem();
  size_t workspace = 0;
  ASSERT_TRUE(context->prepare(problem, 16, &workspace));
  const DecodePlan* plan = context->plan(problem);
  ASSERT_NE(plan, nullptr);
  bool few_row = false;
  for (const PlannedKernel& k : plan->kernels()) few_row |= k.role == KernelRole::kFewRow;
  EXPECT_TRUE(few_row) << "the plan of a batch-variant context";
}

}  // namespace
}  // namespace smla::context_test
