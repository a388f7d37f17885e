// DeviceSession (the tools' and GPU tests' device access): opening makes the device's primary
// context current; closing, or a failed open, undoes exactly what opening did.
#include "harness/device_session.h"

#include "fake_driver_fixture.h"

namespace smla::fake_driver_test {
namespace {

using DeviceSessionOnFake = FakeDriverTest;

TEST_F(DeviceSessionOnFake, MakesThePrimaryContextCurrentUntilClosed) {
  std::unique_ptr<DeviceSession> session;
  ASSERT_TRUE(DeviceSession::open(0, &session));
  EXPECT_EQ(current_context(), fake_cuda::primary_context());
  EXPECT_EQ(fake_->primary_retained, 1);
  session.reset();
  EXPECT_EQ(current_context(), nullptr);
  EXPECT_EQ(fake_->primary_retained, 0);
}

TEST_F(DeviceSessionOnFake, AFailedOpenLeavesTheCallersContextAndReleasesWhatItRetained) {
  ASSERT_EQ(driver_->cuCtxPushCurrent(fake_cuda::other_context()), CUDA_SUCCESS);
  for (const char* call : {"cuDeviceGet", "cuDevicePrimaryCtxRetain", "cuCtxPushCurrent"}) {
    SCOPED_TRACE(call);
    fail(call, CUDA_ERROR_OUT_OF_MEMORY);
    std::unique_ptr<DeviceSession> session;
    const Status opened = DeviceSession::open(0, &session);
    EXPECT_EQ(opened.code(), SMLA_ERR_CUDA);
    EXPECT_NE(opened.message().find(std::string(call) + " failed"), std::string::npos)
        << opened.message();
    EXPECT_EQ(session, nullptr);
    EXPECT_EQ(current_context(), fake_cuda::other_context());
    EXPECT_EQ(fake_->primary_retained, 0);
  }
}

TEST_F(DeviceSessionOnFake, AnOrdinalOfNoDeviceIsNoDevice) {
  for (const int ordinal : {1, -1}) {
    SCOPED_TRACE(ordinal);
    std::unique_ptr<DeviceSession> session;
    const Status opened = DeviceSession::open(ordinal, &session);
    EXPECT_EQ(opened.code(), SMLA_ERR_NO_DEVICE);
    EXPECT_NE(opened.message().find("no device " + std::to_string(ordinal) + " (1 present)"),
              std::string::npos)
        << opened.message();
    EXPECT_EQ(fake_->primary_retained, 0);
  }
}

}  // namespace
}  // namespace smla::fake_driver_test
