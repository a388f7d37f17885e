// The heuristic plan (no tuning rows, no forced tile) of a problem on a named arch, in one mode.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "plan/decode_plan.h"
#include "support/arch_of.h"

namespace smla::test {

inline std::unique_ptr<DecodePlan> plan_of(const char* arch, const smla_problem& problem,
                                           bool batch_variant) {
  PlanSettings settings;
  settings.batch_variant = batch_variant;
  std::unique_ptr<DecodePlan> plan;
  const Status status = DecodePlan::build(arch_of(arch), problem, settings, {}, &plan);
  EXPECT_TRUE(status) << status.message();
  return plan;
}

// What a call of `rows` rows runs given all the workspace it could want.
inline DecodeLaunch launch_of(const DecodePlan& plan, int rows) {
  return plan.call(rows, SIZE_MAX).launch;
}

// The plan's split kernels (narrow, few-row, wave) in the scheduler's order.
inline int split_kernels(const DecodePlan& plan) {
  int count = 0;
  for (const PlannedKernel& k : plan.kernels()) {
    count += k.role == KernelRole::kNarrow || k.role == KernelRole::kFewRow ||
             k.role == KernelRole::kWave;
  }
  return count;
}

}  // namespace smla::test
