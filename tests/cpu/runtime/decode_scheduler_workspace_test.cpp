// DecodeScheduler::workspace_bytes(max_rows), what smla_prepare returns, is the most any call
// of up to max_rows rows needs (checked against every plan, rows 1..1100), so a prepared
// workspace is never too small; and a kernel with one segment never needs any. Also with the
// splits and the fast path smla_prepare gives a DSv4 problem in either mode, where a row count
// under one kernel's split bound may run another.
#include <gtest/gtest.h>

#include <algorithm>

#include "autotune/heuristics.h"
#include "cpu/codegen/dsv4_problems.h"
#include "cpu/runtime/decode_scheduler_keys.h"
#include "runtime/decode_scheduler.h"
#include "support/scoped_env.h"

namespace smla::scheduler_test {
namespace {

// Past the prefix items' last row: two items a row of 8-head CTAs fill 32 MiB at 1020 rows.
constexpr int kMaxRowsChecked = 1100;

void check_workspace(const DecodeScheduler& scheduler) {
  size_t largest = 0;
  for (int max_rows = 1; max_rows <= kMaxRowsChecked; ++max_rows) {
    largest = std::max(largest, scheduler.plan(max_rows).workspace_bytes);
    ASSERT_EQ(scheduler.workspace_bytes(max_rows), largest) << "max_rows " << max_rows;
  }
  for (int max_rows : {1024, 65536, 1 << 24}) {
    EXPECT_EQ(scheduler.workspace_bytes(max_rows), largest) << "max_rows " << max_rows;
  }
}

void check_workspace(const KernelKey& key) {
  SCOPED_TRACE(key.text());
  const DecodeScheduler scheduler(key);
  check_workspace(scheduler);
  if (scheduler.geometry().segments == 1) {
    EXPECT_EQ(scheduler.workspace_bytes(kMaxRowsChecked), 0u);
  }
}

TEST(DecodeSchedulerWorkspace, IsTheLargestNeedOfAnyCall) {
  int single_segment = 0;
  for (const KernelKey& key : scheduler_keys()) {
    check_workspace(key);
    single_segment += key.geometry().segments == 1;
  }
  EXPECT_GT(single_segment, 0);  // the window-only kernels
}

TEST(DecodeSchedulerWorkspace, CoversEverySplitOfBothModes) {
  ScopedEnv unset("SMLA_TILE", nullptr);
  for (const char* arch : {"sm_90a", "sm_100a"}) {
    for (bool batch_invariant : {true, false}) {
      for (const test::NamedProblem& named : test::dsv4_problems()) {
        SCOPED_TRACE(::testing::Message()
                     << named.name << " " << arch << (batch_invariant ? "" : " batch-variant"));
        DecodeTiles tiles;
        ASSERT_TRUE(decode_tiles(arch, named.problem, batch_invariant, &tiles));
        const KernelKey key = KernelKey::decode(arch, named.problem, tiles.tile);
        check_workspace(DecodeScheduler(key, tiles.narrow, tiles.fast));
      }
    }
  }
}

}  // namespace
}  // namespace smla::scheduler_test
