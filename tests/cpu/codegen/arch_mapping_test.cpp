// The architectures smla compiles for, and the one each device needs: exactly sm_90a (H100,
// H200), sm_100a (B200) and sm_103a (B300); any other compute capability is unsupported ("").
#include <gtest/gtest.h>

#include <string>

#include "codegen/kernel_key.h"

namespace smla {
namespace {

void check_capability(int major, int minor, const std::string& expected) {
  SCOPED_TRACE(std::to_string(major) + "." + std::to_string(minor));
  const std::string arch = arch_for_compute_capability(major, minor);
  EXPECT_EQ(arch, expected);
  if (!arch.empty()) {
    EXPECT_TRUE(is_supported_arch(arch));
  }
}

TEST(ArchMapping, ComputeCapabilityToArch) {
  check_capability(9, 0, "sm_90a");
  check_capability(10, 0, "sm_100a");
  check_capability(10, 3, "sm_103a");
  for (const auto& [major, minor] : {std::pair{8, 0},
                                     {8, 6},
                                     {8, 9},
                                     {9, 1},
                                     {10, 1},
                                     {10, 2},
                                     {11, 0},
                                     {12, 0},
                                     {12, 1},
                                     {0, 0},
                                     {-1, 0}}) {
    check_capability(major, minor, "");
  }
}

TEST(ArchMapping, SupportedArchs) {
  for (const char* arch : {"sm_90a", "sm_100a", "sm_103a"}) {
    EXPECT_TRUE(is_supported_arch(arch)) << arch;
  }
  for (const char* arch : {"", "sm_90", "sm_100", "sm_103", "sm_80", "sm_89", "sm_120a", "SM_90A",
                           "sm_90a ", " sm_90a", "compute_90a", "sm_100f"}) {
    EXPECT_FALSE(is_supported_arch(arch)) << '"' << arch << '"';
  }
}

}  // namespace
}  // namespace smla
