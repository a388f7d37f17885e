// A context on a device: which arch it builds for, the primary context it holds, and how a
// device it cannot use or a driver call that fails is reported.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>

#include "cpu/runtime/validate_fixture.h"
#include "fake_driver_fixture.h"

namespace smla::fake_driver_test {
namespace {

using ContextOnDevice = FakeDriverTest;
using validate_test::valid_args;
using validate_test::valid_problem;

TEST_F(ContextOnDevice, HoldsThePrimaryContextUntilDestroyed) {
  std::unique_ptr<Context> context = create_context();
  ASSERT_NE(context, nullptr);
  EXPECT_TRUE(context->has_device());
  EXPECT_STREQ(context->arch()->name, "sm_90a");
  EXPECT_EQ(context->device().name, fake_cuda::kDeviceName);
  EXPECT_EQ(context->device().sm_count, fake_cuda::kSmCount);
  EXPECT_EQ(fake_->primary_retained, 1);
  EXPECT_EQ(current_context(), nullptr) << "creating a context changes nothing current";
  context.reset();
  EXPECT_EQ(fake_->primary_retained, 0);
  EXPECT_EQ(calls("cuCtxPushCurrent"), calls("cuCtxPopCurrent"));
}

TEST_F(ContextOnDevice, BuildsForTheDevicesArch) {
  for (const auto& [major, minor, arch] :
       {std::make_tuple(9, 0, "sm_90a"), std::make_tuple(10, 0, "sm_100a"),
        std::make_tuple(10, 3, "sm_103a"), std::make_tuple(12, 0, "sm_120a"),
        std::make_tuple(12, 1, "sm_121a")}) {
    fake_->major = major;
    fake_->minor = minor;
    std::unique_ptr<Context> context = create_context();
    ASSERT_NE(context, nullptr);
    EXPECT_STREQ(context->arch()->name, arch);
  }
}

TEST_F(ContextOnDevice, ANamedArchOtherThanTheDevicesIsIgnored) {
  smla_options o = options();
  o.arch = "sm_100a";
  std::unique_ptr<Context> context;
  ASSERT_TRUE(Context::create(&o, &context));
  EXPECT_STREQ(context->arch()->name, "sm_90a");
}

TEST_F(ContextOnDevice, AnOlderDeviceIsUnsupported) {
  fake_->major = 8;
  fake_->minor = 0;
  smla_context* context = nullptr;
  const smla_options o = options();
  EXPECT_EQ(smla_context_create(&o, &context), SMLA_ERR_UNSUPPORTED);
  EXPECT_EQ(context, nullptr);
  const std::string message = smla_last_error();
  EXPECT_NE(message.find("compute capability 8.0"), std::string::npos) << message;
  EXPECT_EQ(fake_->primary_retained, 0);
}

TEST_F(ContextOnDevice, ADeviceOrdinalPastTheDevicesIsInvalid) {
  smla_options o = options();
  o.device = 1;
  smla_context* context = nullptr;
  EXPECT_EQ(smla_context_create(&o, &context), SMLA_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(smla_last_error()).find("options.device = 1: this machine has 1 device"),
            std::string::npos)
      << smla_last_error();
  EXPECT_EQ(fake_->primary_retained, 0);
}

TEST_F(ContextOnDevice, AFailedDriverCallIsACudaErrorNamingIt) {
  // The caller's own context stays current through a failed create.
  ASSERT_EQ(driver_->cuCtxPushCurrent(fake_cuda::other_context()), CUDA_SUCCESS);
  for (const char* call :
       {"cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetName", "cuDeviceGetAttribute",
        "cuDriverGetVersion", "cuDevicePrimaryCtxRetain"}) {
    SCOPED_TRACE(call);
    fail(call, CUDA_ERROR_OUT_OF_MEMORY);
    smla_context* context = nullptr;
    const smla_options o = options();
    EXPECT_EQ(smla_context_create(&o, &context), SMLA_ERR_CUDA);
    EXPECT_EQ(context, nullptr);
    const std::string message = smla_last_error();
    EXPECT_NE(message.find(std::string(call) + " failed: CUDA_ERROR_OUT_OF_MEMORY"),
              std::string::npos)
        << message;
    EXPECT_EQ(fake_->primary_retained, 0);
    EXPECT_EQ(current_context(), fake_cuda::other_context());
  }
  EXPECT_EQ(calls("cuCtxPushCurrent"), 1) << "only the test's own push";
}

TEST_F(ContextOnDevice, ABrokenDriverWithANamedArchCompilesWithoutTheDevice) {
  fail("cuDeviceGetCount", CUDA_ERROR_OUT_OF_MEMORY);
  smla_options o = options();
  o.arch = "sm_100a";
  std::unique_ptr<Context> context;
  testing::internal::CaptureStderr();
  const Status status = Context::create(&o, &context);
  const std::string warnings = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(status) << status.message();
  EXPECT_FALSE(context->has_device());
  EXPECT_STREQ(context->arch()->name, "sm_100a");
  EXPECT_NE(warnings.find("no usable GPU: cuDeviceGetCount failed"), std::string::npos) << warnings;
  EXPECT_EQ(fake_->primary_retained, 0);
}

// cuInit runs once per process, so this test loads the driver in a fresh one: gtest's
// "threadsafe" death-test style runs the statement in a re-executed copy of this binary.
TEST(FakeDriverLoad, AFailedCuInitFailsAContextWithoutArchAndNamesTheCause) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const auto create_after_failed_init = [](const char* arch) {
    fake_cuda::State* fake = reset_fake_driver();
    if (fake == nullptr) std::exit(3);
    fake->fail_call = "cuInit";
    fake->fail_result = CUDA_ERROR_SYSTEM_DRIVER_MISMATCH;
    smla_options o;
    smla_options_init(&o);
    o.cache_path = "";
    o.arch = arch;
    smla_context* context = nullptr;
    const smla_status status = smla_context_create(&o, &context);
    std::fprintf(stderr, "status %d: %s\n", status, smla_last_error());
    smla_context_destroy(context);
    std::exit(status == SMLA_OK ? 0 : 1);
  };
  EXPECT_EXIT(create_after_failed_init(nullptr), testing::ExitedWithCode(1),
              "status 4: cuInit failed: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH.*set options.arch");
  EXPECT_EXIT(create_after_failed_init("sm_90a"), testing::ExitedWithCode(0), "status 0");
}

// When the device's context cannot be made current, nothing is loaded or launched in whatever is
// current instead: prepare and decode fail naming the push.
TEST_F(ContextOnDevice, AContextThatCannotBeMadeCurrentFailsTheCall) {
  std::unique_ptr<Context> context = create_context();
  ASSERT_NE(context, nullptr);
  size_t workspace_bytes = 0;
  ASSERT_TRUE(context->prepare(valid_problem(), 8, &workspace_bytes));
  const int loaded = fake_->modules_loaded;
  ASSERT_EQ(driver_->cuCtxPushCurrent(fake_cuda::other_context()), CUDA_SUCCESS);
  fail("cuCtxPushCurrent", CUDA_ERROR_INVALID_CONTEXT);
  smla_problem other = valid_problem();
  other.has_sink = 0;  // not prepared yet
  size_t bytes = 0;
  const Status prepared = context->prepare(other, 8, &bytes);
  EXPECT_EQ(prepared.code(), SMLA_ERR_CUDA);
  EXPECT_NE(prepared.message().find("cuCtxPushCurrent failed"), std::string::npos)
      << prepared.message();
  EXPECT_EQ(fake_->modules_loaded, loaded);
  const Status decoded =
      context->decode(valid_problem(), valid_args(valid_problem(), 1), nullptr,
                      validate_test::fake_pointer<void>(10), workspace_bytes, nullptr);
  EXPECT_EQ(decoded.code(), SMLA_ERR_CUDA);
  EXPECT_NE(decoded.message().find("cuCtxPushCurrent failed"), std::string::npos)
      << decoded.message();
  EXPECT_TRUE(fake_->launches.empty());
  EXPECT_EQ(current_context(), fake_cuda::other_context());
  // Destroyed without its context: the primary context is still released.
  context.reset();
  EXPECT_EQ(fake_->primary_retained, 0);
}

}  // namespace
}  // namespace smla::fake_driver_test
