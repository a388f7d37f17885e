// The arch table: every target smla compiles for, the compute capability that needs it, and
// the facts the planner reads. Any other compute capability or name is none of them.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "codegen/arch.h"

namespace smla {
namespace {

TEST(ArchTable, ComputeCapabilityToArch) {
  const std::pair<std::pair<int, int>, const char*> known[] = {{{9, 0}, "sm_90a"},
                                                               {{10, 0}, "sm_100a"},
                                                               {{10, 3}, "sm_103a"},
                                                               {{12, 0}, "sm_120a"},
                                                               {{12, 1}, "sm_121a"}};
  for (const auto& [capability, name] : known) {
    SCOPED_TRACE(name);
    const ArchSpec* arch = arch_for_compute_capability(capability.first, capability.second);
    ASSERT_NE(arch, nullptr);
    EXPECT_STREQ(arch->name, name);
    EXPECT_EQ(find_arch(name), arch);
  }
  for (const auto& [major, minor] : {std::pair{8, 0},
                                     {8, 6},
                                     {8, 9},
                                     {9, 1},
                                     {10, 1},
                                     {10, 2},
                                     {11, 0},
                                     {12, 2},
                                     {0, 0},
                                     {-1, 0}}) {
    EXPECT_EQ(arch_for_compute_capability(major, minor), nullptr) << major << "." << minor;
  }
}

TEST(ArchTable, NamesAreExact) {
  for (const char* name : {"", "sm_90", "sm_100", "sm_103", "sm_80", "sm_89", "sm_120", "SM_90A",
                           "sm_90a ", " sm_90a", "compute_90a", "sm_100f"}) {
    EXPECT_EQ(find_arch(name), nullptr) << '"' << name << '"';
  }
  std::set<std::string> names;
  for (const ArchSpec& arch : arch_table()) EXPECT_TRUE(names.insert(arch.name).second);
  EXPECT_EQ(arch_names(), "sm_90a, sm_100a, sm_103a, sm_120a, sm_121a");
}

TEST(ArchTable, FactsThePlanReads) {
  for (const ArchSpec& arch : arch_table()) {
    SCOPED_TRACE(arch.name);
    EXPECT_EQ(arch.wgmma, arch.family == ArchFamily::kHopper);
    EXPECT_EQ(arch.tcgen05, arch.family == ArchFamily::kBlackwell);
    EXPECT_GT(arch.wave_sms, 0);
    // One CTA of the most a CTA may use fits; two of them do not.
    EXPECT_TRUE(arch.fits(arch.smem_per_cta, 1));
    EXPECT_FALSE(arch.fits(arch.smem_per_cta + 1, 1));
    EXPECT_FALSE(arch.fits(arch.smem_per_cta, 2));
  }
  // The consumer parts: about 99 KB a CTA, no warpgroup or tensor-memory MMAs.
  for (const char* name : {"sm_120a", "sm_121a"}) {
    const ArchSpec& arch = *find_arch(name);
    EXPECT_EQ(arch.smem_per_cta, 99 * 1024);
    EXPECT_FALSE(arch.wgmma);
    EXPECT_FALSE(arch.tcgen05);
  }
  EXPECT_EQ(find_arch("sm_90a")->smem_per_cta, 227 * 1024);
  // Two 113 KB CTAs fit an H100's SM, two of 114 KB do not (1 KB a CTA is the system's).
  EXPECT_TRUE(find_arch("sm_90a")->fits(113 * 1024, 2));
  EXPECT_FALSE(find_arch("sm_90a")->fits(114 * 1024, 2));
}

}  // namespace
}  // namespace smla
