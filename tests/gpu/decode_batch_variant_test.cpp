// Batch-variant mode (smla_options.batch_invariant = 0, here through SMLA_BATCH_INVARIANT=0):
// calls of many rows of a 64- or 128-head fp8 problem run the wgmma kernel on sm_90a, fewer rows
// the default tiles. Both sides of the switch against the CPU reference on random inputs, with
// invalid indices, random lengths including 0, NaN in unselected slots and poisoned outputs; on
// other architectures the mode changes nothing and the same checks hold.
#include "gpu_env.h"
#include "support/scoped_env.h"

namespace smla::gpu_test {
namespace {

class DecodeBatchVariant : public ::testing::Test {
 protected:
  void SetUp() override {
    SMLA_REQUIRE_GPU();
    test::ScopedEnv variant("SMLA_BATCH_INVARIANT", "0");
    ctx_ = create_context();
    ASSERT_NE(ctx_, nullptr);
  }
  void TearDown() override { smla_context_destroy(ctx_); }

  void check(const smla_problem& p, int rows, uint64_t seed, const char* what) {
    check_case(spec_for(p, rows, seed), what, {}, ctx_);
  }

  smla_context* ctx_ = nullptr;
};

// 128 heads (two 64-head CTAs a row): rows from 32 run the wgmma kernel.
TEST_F(DecodeBatchVariant, BothSidesOfTheSwitchAt128Heads) {
  const smla_problem p =
      make_problem(128, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 1024}});
  check(p, 1, 3000, "batch-variant, 1 row (split)");
  check(p, 31, 3001, "batch-variant, 31 rows (default tiles)");
  check(p, 32, 3002, "batch-variant, 32 rows (fast path)");
  check(p, 130, 3003, "batch-variant, 130 rows (fast path)");
}

// 64 heads (one CTA a row): rows from 64; the uniform layout with fp8 q, and MTP rows.
TEST_F(DecodeBatchVariant, BothSidesOfTheSwitchAt64Heads) {
  const smla_problem p =
      make_problem(64, SMLA_KV_FP8_UNIFORM, SMLA_FP8_E4M3, 1, {{256, 128}, {64, 512}});
  check(p, 63, 3100, "batch-variant, 63 rows (default tiles)");
  check(p, 64, 3101, "batch-variant, 64 rows (fast path)");
  const smla_problem mtp =
      make_problem(64, SMLA_KV_FP8_PACKED, SMLA_BF16, 2, {{256, 128}, {2, 1024}});
  check(mtp, 140, 3102, "batch-variant, q_len 2, HCA pages of 2 (fast path)");
}

}  // namespace
}  // namespace smla::gpu_test
