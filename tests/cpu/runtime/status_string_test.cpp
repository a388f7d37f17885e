// smla_status_string names every status code by its enumerator, and answers a value outside the
// enum with a fixed string instead of NULL, so a host can always print it.
#include <gtest/gtest.h>
#include <smla.h>

#include <set>
#include <string>

namespace smla {
namespace {

void check_name(smla_status status, const char* name) {
  ASSERT_NE(smla_status_string(status), nullptr);
  EXPECT_STREQ(smla_status_string(status), name);
}

TEST(StatusString, NamesEveryCode) {
  check_name(SMLA_OK, "SMLA_OK");
  check_name(SMLA_ERR_INVALID_ARGUMENT, "SMLA_ERR_INVALID_ARGUMENT");
  check_name(SMLA_ERR_UNSUPPORTED, "SMLA_ERR_UNSUPPORTED");
  check_name(SMLA_ERR_NO_DEVICE, "SMLA_ERR_NO_DEVICE");
  check_name(SMLA_ERR_CUDA, "SMLA_ERR_CUDA");
  check_name(SMLA_ERR_COMPILE, "SMLA_ERR_COMPILE");
  check_name(SMLA_ERR_CACHE, "SMLA_ERR_CACHE");
  check_name(SMLA_ERR_WORKSPACE, "SMLA_ERR_WORKSPACE");
  check_name(SMLA_ERR_NOT_READY, "SMLA_ERR_NOT_READY");
  check_name(SMLA_ERR_INTERNAL, "SMLA_ERR_INTERNAL");
  std::set<std::string> names;
  for (int code = SMLA_OK; code <= SMLA_ERR_INTERNAL; ++code) {
    names.insert(smla_status_string(static_cast<smla_status>(code)));
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(SMLA_ERR_INTERNAL) + 1);
}

TEST(StatusString, UnknownCodeIsNamedUnknown) {
  // Values a C caller can pass that name no enumerator (within the enum's range in C++).
  for (int code : {10, 15}) {
    check_name(static_cast<smla_status>(code), "unknown smla_status");
  }
}

}  // namespace
}  // namespace smla
