// DecodeScheduler::workspace_bytes(max_rows), what smla_prepare returns, is the most any call
// of up to max_rows rows needs (checked against every plan, rows 1..300), so a prepared
// workspace is never too small; and a kernel with one segment never needs any.
#include <gtest/gtest.h>

#include <algorithm>

#include "cpu/runtime/decode_scheduler_keys.h"
#include "runtime/decode_scheduler.h"

namespace smla::scheduler_test {
namespace {

constexpr int kMaxRowsChecked = 300;

void check_workspace(const KernelKey& key) {
  SCOPED_TRACE(key.text());
  const DecodeScheduler scheduler(key);
  size_t largest = 0;
  for (int max_rows = 1; max_rows <= kMaxRowsChecked; ++max_rows) {
    largest = std::max(largest, scheduler.plan(max_rows).workspace_bytes);
    ASSERT_EQ(scheduler.workspace_bytes(max_rows), largest) << "max_rows " << max_rows;
  }
  for (int max_rows : {1024, 65536, 1 << 24}) {
    EXPECT_EQ(scheduler.workspace_bytes(max_rows), largest) << "max_rows " << max_rows;
  }
  if (scheduler.geometry().segments == 1) {
    EXPECT_EQ(largest, 0u);
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

}  // namespace
}  // namespace smla::scheduler_test
