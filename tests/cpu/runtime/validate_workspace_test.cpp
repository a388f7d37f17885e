// validate_workspace: presence and alignment of the caller's workspace (its size is dispatch's).
#include "validate_fixture.h"

namespace smla::validate_test {
namespace {

TEST(ValidateWorkspace, NullOnlyWithZeroBytes) {
  EXPECT_TRUE(IsOk(validate_workspace(nullptr, 0)));
  EXPECT_TRUE(
      IsInvalid(validate_workspace(nullptr, 4096), {"workspace = NULL", "workspace_bytes = 4096"}));
}

TEST(ValidateWorkspace, Aligned16Bytes) {
  EXPECT_TRUE(IsOk(validate_workspace(fake_pointer<void>(10), 1 << 20)));
  EXPECT_TRUE(IsOk(validate_workspace(fake_pointer<void>(10, 16), 1 << 20)));
  EXPECT_TRUE(IsInvalid(validate_workspace(fake_pointer<void>(10, 8), 1 << 20),
                        {"workspace = 0x7f0a00000008: must be 16-byte aligned"}));
}

TEST(ValidateWorkspace, NotPastTheEndOfTheAddressSpace) {
  // Up to the last byte but one; the address one past the end must exist too.
  const void* last_mib = reinterpret_cast<const void*>(uintptr_t{0xfffffffffff00000});
  EXPECT_TRUE(IsOk(validate_workspace(last_mib, (1 << 20) - 1)));
  EXPECT_TRUE(IsInvalid(validate_workspace(last_mib, 1 << 20),
                        {"workspace = 0xfffffffffff00000, workspace_bytes = 1048576: past the end "
                         "of the address space"}));
}

TEST(ValidateWorkspace, NonNullWithZeroBytesIsStillAligned) {
  EXPECT_TRUE(IsOk(validate_workspace(fake_pointer<void>(10), 0)));
  EXPECT_TRUE(IsInvalid(validate_workspace(fake_pointer<void>(10, 4), 0), {"16-byte aligned"}));
}

}  // namespace
}  // namespace smla::validate_test
