// The workspace bound DecodeScheduler promises (decode_scheduler.h): for every DSv4 preset
// problem prepared for 1024 rows, smla_prepare asks for at most 32 MiB in either mode on every
// arch (with the narrow splits, and in batch-variant mode the few-row and wave splits), so a
// server can allocate it once per layer type without budgeting for it.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "cpu/codegen/dsv4_problems.h"
#include "cpu/plan/plan_of.h"

namespace smla {
namespace {

constexpr size_t kBound = size_t{32} << 20;
constexpr int kMaxRows = 1024;

TEST(PresetWorkspaceBound, AtMost32MiBAt1024Rows) {
  size_t largest = 0;
  std::string largest_name;
  for (const test::NamedProblem& named : test::dsv4_problems()) {
    SCOPED_TRACE(named.name);
    for (const ArchSpec& arch : arch_table()) {
      for (const bool batch_variant : {false, true}) {
        const size_t bytes =
            test::plan_of(arch.name, named.problem, batch_variant)->workspace_bytes(kMaxRows);
        EXPECT_LE(bytes, kBound) << arch.name << (batch_variant ? " batch-variant" : "");
        if (bytes > largest) {
          largest = bytes;
          largest_name = named.name;
        }
      }
    }
  }
  EXPECT_GT(largest, 0u);
  std::printf("largest preset workspace at %d rows: %zu bytes (%.2f MiB), %s\n", kMaxRows, largest,
              largest / 1048576.0, largest_name.c_str());
}

}  // namespace
}  // namespace smla
