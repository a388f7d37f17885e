// DecodeScheduler::workspace_bytes(max_rows), what smla_prepare returns, is the most any call
// of up to max_rows rows needs (checked against every plan, rows 1..1100), so a prepared
// workspace is never too small; and a kernel with one segment never needs any. Also with the
// splits and the fast path smla_prepare gives a DSv4 problem in either mode, where a row count
// under one kernel's split bound may run another.
#include <gtest/gtest.h>

#include <algorithm>

#include "cpu/codegen/dsv4_problems.h"
#include "cpu/plan/decode_scheduler_keys.h"
#include "cpu/plan/plan_of.h"
#include "plan/decode_scheduler.h"

namespace smla::scheduler_test {
namespace {

// Past the prefix items' last row: two items a row of 8-head CTAs fill 32 MiB at 1020 rows.
constexpr int kMaxRowsChecked = 1100;

// `launch(rows)` is the call's launch given all the workspace it could want.
template <typename Plan, typename Launch>
void check_workspace(const Plan& plan, Launch launch) {
  size_t largest = 0;
  for (int max_rows = 1; max_rows <= kMaxRowsChecked; ++max_rows) {
    largest = std::max(largest, launch(max_rows).workspace_bytes);
    ASSERT_EQ(plan.workspace_bytes(max_rows), largest) << "max_rows " << max_rows;
  }
  for (int max_rows : {1024, 65536, 1 << 24}) {
    EXPECT_EQ(plan.workspace_bytes(max_rows), largest) << "max_rows " << max_rows;
  }
}

void check_workspace(const DecodeKernel& key) {
  SCOPED_TRACE(key.text());
  const DecodeScheduler scheduler(key);
  check_workspace(scheduler, [&](int rows) { return scheduler.plan(rows); });
  if (scheduler.geometry().segments == 1) {
    EXPECT_EQ(scheduler.workspace_bytes(kMaxRowsChecked), 0u);
  }
}

TEST(DecodeSchedulerWorkspace, IsTheLargestNeedOfAnyCall) {
  int single_segment = 0;
  for (const DecodeKernel& key : scheduler_keys()) {
    check_workspace(key);
    single_segment += key.geometry().segments == 1;
  }
  EXPECT_GT(single_segment, 0);  // the window-only kernels
}

TEST(DecodeSchedulerWorkspace, CoversEverySplitOfBothModes) {
  for (const ArchSpec& arch : arch_table()) {
    for (bool batch_variant : {false, true}) {
      for (const test::NamedProblem& named : test::dsv4_problems()) {
        SCOPED_TRACE(::testing::Message()
                     << named.name << " " << arch.name << (batch_variant ? " batch-variant" : ""));
        const std::unique_ptr<DecodePlan> plan =
            test::plan_of(arch.name, named.problem, batch_variant);
        check_workspace(*plan, [&](int rows) { return test::launch_of(*plan, rows); });
      }
    }
  }
}

}  // namespace
}  // namespace smla::scheduler_test
