// The key id (XXH3-64 of the text and the toolchain fingerprint) is a pure function of both:
// stable across calls and copies, and different when either changes, so a new toolchain never
// finds an old cubin.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "codegen/kernel_key.h"
#include "cpu/codegen/dsv4_problems.h"
#include "support/arch_of.h"

namespace smla {
namespace {

constexpr const char* kFingerprint = "nvrtc=13.0;templates=0123456789abcdef;codegen=1;options=0";

TEST(KernelKeyId, IsStableForEqualInputs) {
  for (const test::NamedProblem& named : test::dsv4_problems()) {
    SCOPED_TRACE(named.name);
    const DecodeKernel key =
        DecodeKernel::of(test::arch_of("sm_100a"), named.problem, TileConfig{});
    const DecodeKernel rebuilt =
        DecodeKernel::of(test::arch_of("sm_100a"), named.problem, TileConfig{});
    EXPECT_EQ(KernelKey(key).id(kFingerprint), KernelKey(key).id(kFingerprint));
    EXPECT_EQ(KernelKey(key).id(kFingerprint), KernelKey(rebuilt).id(kFingerprint));
    EXPECT_EQ(KernelKey(key.combine()).id(kFingerprint),
              KernelKey(rebuilt.combine()).id(kFingerprint));
  }
}

TEST(KernelKeyId, ChangesWithTheFingerprint) {
  const KernelKey key = DecodeKernel::of(test::arch_of("sm_90a"),
                                         test::dsv4_compressed_problem(16, 64, 512), TileConfig{});
  std::set<uint64_t> ids;
  for (const char* fingerprint :
       {kFingerprint, "nvrtc=13.1;templates=0123456789abcdef;codegen=1;options=0",
        "nvrtc=13.0;templates=0123456789abcdee;codegen=1;options=0",
        "nvrtc=13.0;templates=0123456789abcdef;codegen=2;options=0", ""}) {
    SCOPED_TRACE(fingerprint);
    EXPECT_TRUE(ids.insert(key.id(fingerprint)).second);
  }
}

TEST(KernelKeyId, DiffersBetweenDistinctKeys) {
  // Every distinct decode and combine text of the DSv4 problems on every arch gets its own id.
  std::set<std::string> texts;
  std::set<uint64_t> ids;
  for (const ArchSpec& arch : arch_table()) {
    for (const test::NamedProblem& named : test::dsv4_problems()) {
      const DecodeKernel key = DecodeKernel::of(arch, named.problem, TileConfig{});
      for (const KernelKey& k : {KernelKey(key), KernelKey(key.combine())}) {
        if (texts.insert(k.text()).second) ids.insert(k.id(kFingerprint));
      }
    }
  }
  EXPECT_GT(texts.size(), 130u);
  EXPECT_EQ(ids.size(), texts.size());
}

}  // namespace
}  // namespace smla
