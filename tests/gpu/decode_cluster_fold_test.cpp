// Split calls fold their segments' partials inside the row's cluster by default, and in the
// combine kernel with SMLA_CLUSTER_FOLD=0 or where a cluster would exceed 16 CTAs. Each side
// against the CPU reference on random inputs (invalid indices, random lengths including 0, NaN
// in unselected slots, poisoned outputs), and the two bit for bit against each other: they run
// the same fold on the same partials, so a row's bits do not depend on where it is folded.
#include <cstring>

#include "gpu_env.h"
#include "support/scoped_env.h"

namespace smla::gpu_test {
namespace {

class DecodeClusterFold : public ::testing::Test {
 protected:
  void SetUp() override {
    SMLA_REQUIRE_GPU();
    combine_ctx_ = create_context();
    ASSERT_NE(combine_ctx_, nullptr);
  }
  void TearDown() override { smla_context_destroy(combine_ctx_); }

  // The shared context folds in clusters; combine_ctx_ prepares (and so schedules) with the
  // combine kernel.
  void check_both(const smla_problem& p, int rows, uint64_t seed, const char* what) {
    const ref::CaseSpec spec = spec_for(p, rows, seed);
    const tools::CheckResult cluster = check_case(spec, what);
    tools::CheckResult combine;
    {
      test::ScopedEnv fold("SMLA_CLUSTER_FOLD", "0");
      combine = check_case(spec, what, {}, combine_ctx_);
    }
    ASSERT_EQ(cluster.out.size(), combine.out.size()) << what;
    EXPECT_EQ(0, std::memcmp(cluster.out.data(), combine.out.data(), cluster.out.size() * 2))
        << what << ": the cluster fold's bits differ from the combine kernel's";
    ASSERT_EQ(cluster.lse.size(), combine.lse.size()) << what;
    EXPECT_EQ(0, std::memcmp(cluster.lse.data(), combine.lse.data(), cluster.lse.size() * 4))
        << what << ": lse";
  }

  smla_context* combine_ctx_ = nullptr;
};

// 9 segments a row: a non-portable cluster size. 1 and 5 rows over 8-head CTAs, 40 over 16.
TEST_F(DecodeClusterFold, EntriesOnMKernelAt16Heads) {
  const smla_problem p =
      make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 1024}});
  check_both(p, 1, 4000, "16 heads, 1 row");
  check_both(p, 5, 4001, "16 heads, 5 rows");
  check_both(p, 40, 4002, "16 heads, 40 rows");
}

// 5 segments; the uniform layout with fp8 q; odd page sizes; 12 heads (a partial head group).
TEST_F(DecodeClusterFold, OtherLayoutsAndShapes) {
  check_both(make_problem(8, SMLA_KV_FP8_UNIFORM, SMLA_FP8_E4M3, 1, {{256, 128}, {64, 512}}), 64,
             4100, "8 heads, uniform, fp8 q, 64 rows");
  check_both(make_problem(12, SMLA_KV_FP8_PACKED, SMLA_BF16, 2, {{61, 128}, {1, 512}}), 6, 4101,
             "12 heads, q_len 2, pages of 61 and 1");
  check_both(make_problem(16, SMLA_KV_BF16, SMLA_BF16, 1, {{256, 128}, {64, 512}}), 3, 4102,
             "16 heads, bf16 layout");
}

// The heads-on-M kernel's splits (16- and 32-head CTAs), and HCA's wide rows (8 segments of 33
// tiles).
TEST_F(DecodeClusterFold, HeadsOnMKernelAndWideRows) {
  const smla_problem csa =
      make_problem(128, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 1024}});
  check_both(csa, 1, 4200, "128 heads, 1 row");
  check_both(csa, 3, 4201, "128 heads, 3 rows");
  check_both(make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {2, 8192}}), 4, 4202,
             "16 heads, HCA 1M, 4 rows");
}

// A forced tile of 20 one-tile segments: more than a cluster holds, so both contexts fold in the
// combine kernel.
TEST_F(DecodeClusterFold, SegmentsBeyondAClusterFoldInTheCombineKernel) {
  const smla_problem p = make_problem(8, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 512}});
  test::ScopedEnv tile("SMLA_TILE", "hg8.w8.te32.st2.seg1.mb2.mma_sync");
  smla_context* ctx = create_context();
  ASSERT_NE(ctx, nullptr);
  check_case(spec_for(p, 2, 4300), "20 segments, 2 rows", {}, ctx);
  smla_context_destroy(ctx);
}

}  // namespace
}  // namespace smla::gpu_test
