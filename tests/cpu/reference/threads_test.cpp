// The reference gives the same bits with any number of threads, and handles zero rows.
#include <gtest/gtest.h>

#include "random_spec.h"
#include "reference/attention.h"

namespace smla::ref::testing {
namespace {

TEST(Threads, SameBitsForAnyThreadCount) {
  const HostCase c = make_random_case(small_spec(SMLA_KV_FP8_PACKED, SMLA_BF16, 20, 9, 4));
  const smla_args args = c.host_args();
  const ReferenceResult one = attention(c.problem, args, 1);
  for (int threads : {2, 3, 16, 0, -1}) {
    SCOPED_TRACE(threads);
    const ReferenceResult many = attention(c.problem, args, threads);
    EXPECT_EQ(one.out, many.out);
    EXPECT_EQ(one.lse, many.lse);
  }
}

TEST(Threads, ZeroRows) {
  CaseSpec spec = small_spec(SMLA_KV_BF16, SMLA_BF16, 4, 1, 1);
  spec.num_rows = 0;
  const HostCase c = make_random_case(spec);
  const ReferenceResult result = attention(c.problem, c.host_args());
  EXPECT_TRUE(result.out.empty());
  EXPECT_TRUE(result.lse.empty());
}

}  // namespace
}  // namespace smla::ref::testing
