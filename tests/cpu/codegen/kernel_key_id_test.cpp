// The key id (XXH3-64 of the text and the toolchain fingerprint) is a pure function of both:
// stable across calls and copies, and different when either changes, so a new toolchain never
// finds an old cubin.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "codegen/kernel_key.h"
#include "cpu/codegen/dsv4_problems.h"

namespace smla {
namespace {

constexpr const char* kFingerprint = "nvrtc=13.0;templates=0123456789abcdef;codegen=1;options=0";

TEST(KernelKeyId, IsStableForEqualInputs) {
  for (const test::NamedProblem& named : test::dsv4_problems()) {
    SCOPED_TRACE(named.name);
    const KernelKey key = KernelKey::decode("sm_100a", named.problem, TileConfig{});
    const KernelKey rebuilt = KernelKey::decode("sm_100a", named.problem, TileConfig{});
    EXPECT_EQ(key.id(kFingerprint), key.id(kFingerprint));
    EXPECT_EQ(key.id(kFingerprint), rebuilt.id(kFingerprint));
    EXPECT_EQ(KernelKey::combine_for(key).id(kFingerprint),
              KernelKey::combine_for(rebuilt).id(kFingerprint));
  }
}

TEST(KernelKeyId, ChangesWithTheFingerprint) {
  const KernelKey key =
      KernelKey::decode("sm_90a", test::dsv4_compressed_problem(16, 64, 512), TileConfig{});
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
  for (const char* arch : {"sm_90a", "sm_100a", "sm_103a"}) {
    for (const test::NamedProblem& named : test::dsv4_problems()) {
      const KernelKey key = KernelKey::decode(arch, named.problem, TileConfig{});
      for (const KernelKey& k : {key, KernelKey::combine_for(key)}) {
        if (texts.insert(k.text()).second) ids.insert(k.id(kFingerprint));
      }
    }
  }
  EXPECT_GT(texts.size(), 80u);
  EXPECT_EQ(ids.size(), texts.size());
}

}  // namespace
}  // namespace smla
