// A plan's row ranges (what `smla plan` prints): consecutive row counts that run the same kernel
// the same way, covering 1 .. max_rows without a gap, each range's calls running what call()
// says for its rows, and an open last range once the plan no longer changes.
#include <gtest/gtest.h>

#include "cpu/codegen/dsv4_problems.h"
#include "cpu/plan/plan_of.h"

namespace smla {
namespace {

void check_ranges(const DecodePlan& plan, int max_rows) {
  const std::vector<RowRange> ranges = plan.row_ranges(max_rows);
  ASSERT_FALSE(ranges.empty());
  int next = 1;
  for (size_t i = 0; i < ranges.size(); ++i) {
    const RowRange& r = ranges[i];
    SCOPED_TRACE(::testing::Message() << "range " << r.first_rows << "-" << r.last_rows);
    EXPECT_EQ(r.first_rows, next);
    const bool last = i + 1 == ranges.size();
    if (r.last_rows == 0) {
      EXPECT_TRUE(last);
    }
    const int end = r.last_rows == 0 ? std::max(max_rows, r.first_rows + 300) : r.last_rows;
    for (int rows = r.first_rows; rows <= end; ++rows) {
      const PlannedCall call = plan.call(rows, plan.workspace_bytes(rows));
      ASSERT_EQ(call.kernel, r.kernel) << rows;
      ASSERT_EQ(call.launch.split, r.split) << rows;
      ASSERT_EQ(call.launch.prefix_segments, r.prefix_segments) << rows;
    }
    if (i > 0) {  // merged: neighbours differ
      const RowRange& before = ranges[i - 1];
      EXPECT_TRUE(before.kernel != r.kernel || before.split != r.split ||
                  before.prefix_segments != r.prefix_segments);
    }
    next = r.last_rows + 1;
  }
  if (ranges.back().last_rows != 0) {
    EXPECT_EQ(ranges.back().last_rows, max_rows);
  }
}

TEST(DecodePlanRanges, CoverEveryRowCountOfBothModes) {
  for (const char* arch : {"sm_90a", "sm_100a", "sm_120a"}) {
    for (const test::NamedProblem& named : test::dsv4_problems()) {
      for (const bool batch_variant : {false, true}) {
        SCOPED_TRACE(::testing::Message() << arch << " " << named.name << " " << batch_variant);
        check_ranges(*test::plan_of(arch, named.problem, batch_variant), 4096);
      }
    }
  }
}

TEST(DecodePlanRanges, TheDsv4ProTp8CsaPlan) {
  // 16 heads, 128 + 1024 entries in 9 segments: the narrow split (8-head CTAs) up to 7 rows,
  // the default's split up to 29, prefix items or whole rows after.
  const std::unique_ptr<DecodePlan> plan =
      test::plan_of("sm_90a", test::dsv4_compressed_problem(16, 64, 1024), false);
  const std::vector<RowRange> ranges = plan->row_ranges(8192);
  ASSERT_GE(ranges.size(), 3u);
  EXPECT_EQ(ranges[0].first_rows, 1);
  EXPECT_EQ(ranges[0].last_rows, 7);
  EXPECT_EQ(plan->kernels()[ranges[0].kernel].role, KernelRole::kNarrow);
  EXPECT_TRUE(ranges[0].split);
  EXPECT_EQ(ranges[1].first_rows, 8);
  EXPECT_EQ(ranges[1].kernel, 0);
  EXPECT_TRUE(ranges[1].split);
  EXPECT_EQ(ranges.back().last_rows, 0);  // whole rows from here on
  EXPECT_FALSE(ranges.back().split);
  EXPECT_EQ(ranges.back().kernel, 0);
  // Fewer rows asked: the ranges stop there.
  const std::vector<RowRange> few = plan->row_ranges(5);
  ASSERT_EQ(few.size(), 1u);
  EXPECT_EQ(few[0].last_rows, 5);
}

TEST(DecodePlanRanges, ATunedBucketIsARangeOfItsOwn) {
  const smla_problem problem = test::dsv4_compressed_problem(16, 64, 1024);
  PlanSettings settings;
  std::unique_ptr<DecodePlan> plan;
  ASSERT_TRUE(DecodePlan::build(test::arch_of("sm_90a"), problem, settings,
                                {{512, *TileConfig::parse("hg16.w8.te32.st4.seg4.mb1.mma_sync")}},
                                &plan));
  const std::vector<RowRange> ranges = plan->row_ranges(8192);
  const int tuned = static_cast<int>(plan->kernels().size()) - 1;
  int found = 0;
  for (const RowRange& r : ranges) {
    if (r.kernel != tuned) continue;
    ++found;
    EXPECT_EQ(r.first_rows, 512);
    EXPECT_EQ(r.last_rows, 1023);
  }
  EXPECT_EQ(found, 1);
  EXPECT_EQ(ranges.back().last_rows, 0);
  EXPECT_EQ(ranges.back().kernel, 0);
}

}  // namespace
}  // namespace smla
