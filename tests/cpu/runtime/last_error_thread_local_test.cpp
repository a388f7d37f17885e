// smla_last_error() is per thread: a failing call on one thread does not change the message
// another thread reads, and a thread that has made no call reads "". It is the message of the
// thread's last failing call (include/smla.h), so a successful call after it keeps it.
#include <gtest/gtest.h>
#include <smla.h>

#include <future>
#include <string>
#include <thread>

namespace smla {
namespace {

// Fails smla_prepare on a null context: "ctx = NULL: ...".
smla_status fail_with_null_context() {
  size_t workspace = 0;
  return smla_prepare(nullptr, nullptr, 1, &workspace);
}

// Fails smla_context_create on a bad device ordinal: "options.device = -1 ...".
smla_status fail_with_bad_device() {
  smla_options options;
  smla_options_init(&options);
  options.device = -1;
  smla_context* context = nullptr;
  return smla_context_create(&options, &context);
}

TEST(LastError, IsThreadLocal) {
  std::promise<void> b_failed, a_failed;
  std::string b_before, b_after;
  std::thread b([&] {
    EXPECT_STREQ(smla_last_error(), "");
    EXPECT_EQ(fail_with_bad_device(), SMLA_ERR_INVALID_ARGUMENT);
    b_before = smla_last_error();
    b_failed.set_value();
    a_failed.get_future().wait();
    b_after = smla_last_error();
  });
  b_failed.get_future().wait();
  EXPECT_EQ(fail_with_null_context(), SMLA_ERR_INVALID_ARGUMENT);
  const std::string a_message = smla_last_error();
  a_failed.set_value();
  b.join();

  EXPECT_NE(a_message.find("ctx = NULL"), std::string::npos) << a_message;
  EXPECT_NE(b_before.find("options.device = -1"), std::string::npos) << b_before;
  EXPECT_EQ(b_after, b_before);
  EXPECT_EQ(std::string(smla_last_error()), a_message);

  std::string fresh = "unset";
  std::thread([&] { fresh = smla_last_error(); }).join();
  EXPECT_EQ(fresh, "");
}

// include/smla.h documents "the last failing call on this thread": a host that cleans up
// (smla_context_destroy, another prepare) before logging smla_last_error() still gets it.
TEST(LastError, SurvivesALaterSuccessfulCall) {
  EXPECT_EQ(fail_with_null_context(), SMLA_ERR_INVALID_ARGUMENT);
  const std::string failure = smla_last_error();
  ASSERT_NE(failure, "");
  EXPECT_EQ(smla_context_destroy(nullptr), SMLA_OK);
  EXPECT_EQ(std::string(smla_last_error()), failure);
}

}  // namespace
}  // namespace smla
