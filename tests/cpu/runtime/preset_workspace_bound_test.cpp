// The workspace bound DecodeScheduler promises (decode_scheduler.h): for every DSv4 preset
// problem prepared for 1024 rows, smla_prepare asks for at most 32 MiB in either mode (with the
// narrow splits, and in batch-variant mode the few-row split), so a server can allocate it once
// per layer type without budgeting for it.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "autotune/heuristics.h"
#include "cpu/codegen/dsv4_problems.h"
#include "runtime/decode_scheduler.h"

namespace smla {
namespace {

constexpr size_t kBound = size_t{32} << 20;
constexpr int kMaxRows = 1024;

TEST(PresetWorkspaceBound, AtMost32MiBAt1024Rows) {
  size_t largest = 0;
  std::string largest_name;
  for (const test::NamedProblem& named : test::dsv4_problems()) {
    SCOPED_TRACE(named.name);
    for (const bool batch_invariant : {true, false}) {
      DecodeTiles tiles;
      ASSERT_TRUE(decode_tiles("sm_90a", named.problem, batch_invariant, &tiles));
      const KernelKey key = KernelKey::decode("sm_90a", named.problem, tiles.tile);
      const size_t bytes = DecodeScheduler(key, tiles.narrow).workspace_bytes(kMaxRows);
      EXPECT_LE(bytes, kBound) << key.text();
      if (bytes > largest) {
        largest = bytes;
        largest_name = named.name;
      }
    }
  }
  EXPECT_GT(largest, 0u);
  std::printf("largest preset workspace at %d rows: %zu bytes (%.2f MiB), %s\n", kMaxRows, largest,
              largest / 1048576.0, largest_name.c_str());
}

}  // namespace
}  // namespace smla
