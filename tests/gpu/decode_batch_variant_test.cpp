// Batch-variant mode (smla_options.batch_variant = 1, here through SMLA_BATCH_VARIANT=1):
// calls of many rows of a 64- or 128-head fp8 problem run the wgmma kernel on sm_90a, others
// the default tile with one segment a row where the default runs whole rows; calls of few rows
// the few-row split (short segments, so up to 40 for the combine kernel to fold); calls between
// them the wave splits (the default tile with fewer, longer segments). Each side of
// the switches against the CPU reference on random inputs, with invalid indices, random lengths
// including 0, NaN in unselected slots and poisoned outputs.
#include "gpu_env.h"
#include "support/scoped_env.h"

namespace smla::gpu_test {
namespace {

class DecodeBatchVariant : public ::testing::Test {
 protected:
  void SetUp() override {
    SMLA_REQUIRE_GPU();
    ScopedEnv variant("SMLA_BATCH_VARIANT", "1");
    ctx_ = create_context();
    ASSERT_NE(ctx_, nullptr);
  }
  void TearDown() override { smla_context_destroy(ctx_); }

  void check(const smla_problem& p, int rows, uint64_t seed, const char* what) {
    check_case(spec_for(p, rows, seed), what, {}, ctx_);
  }

  smla_context* ctx_ = nullptr;
};

// 128 heads (two 64-head CTAs a row): rows from 17 (past the wave splits) run the wgmma kernel;
// HCA rows at 1M context (no wave splits) from 32.
TEST_F(DecodeBatchVariant, BothSidesOfTheSwitchAt128Heads) {
  const smla_problem p =
      make_problem(128, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 1024}});
  check(p, 1, 3000, "batch-variant, 1 row (split)");
  check(p, 16, 3001, "batch-variant, 16 rows (wave split)");
  check(p, 17, 3002, "batch-variant, 17 rows (fast path)");
  check(p, 130, 3003, "batch-variant, 130 rows (fast path)");
  const smla_problem hca =
      make_problem(128, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {2, 8192}});
  check(hca, 31, 3004, "batch-variant, HCA 1M, 31 rows (default tiles)");
}

// 64 heads (one CTA a row): rows from 34 (past the wave splits); the uniform layout with fp8 q,
// and MTP rows.
TEST_F(DecodeBatchVariant, BothSidesOfTheSwitchAt64Heads) {
  const smla_problem p =
      make_problem(64, SMLA_KV_FP8_UNIFORM, SMLA_FP8_E4M3, 1, {{256, 128}, {64, 512}});
  check(p, 33, 3100, "batch-variant, 33 rows (wave split)");
  check(p, 34, 3101, "batch-variant, 34 rows (fast path)");
  const smla_problem mtp =
      make_problem(64, SMLA_KV_FP8_PACKED, SMLA_BF16, 2, {{256, 128}, {2, 1024}});
  check(mtp, 140, 3102, "batch-variant, q_len 2, HCA pages of 2 (fast path)");
}

// Off the wgmma kernel the fast path is the default tile with one segment a row, from the rows
// the default runs whole: every layout and both kernels, and packed tokens whose magnitudes span
// 2^12 (the whole row shares one reference of the value scales).
TEST_F(DecodeBatchVariant, WholeRowsInOneSegment) {
  ref::CaseSpec wide = spec_for(
      make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 1024}}), 140, 3400);
  wide.token_magnitude_log2 = 6.0;
  check_case(wide, "batch-variant, 16 heads, 140 rows, wide token magnitudes", {}, ctx_);
  check(make_problem(8, SMLA_KV_FP8_UNIFORM, SMLA_FP8_E4M3, 1, {{256, 128}, {64, 512}}), 140, 3401,
        "batch-variant, 8 heads, uniform, fp8 q, 140 rows");
  check(make_problem(32, SMLA_KV_FP8_PACKED, SMLA_BF16, 2, {{256, 128}, {64, 512}}), 100, 3402,
        "batch-variant, 32 heads (heads on M), q_len 2, 100 rows");
  check(make_problem(64, SMLA_KV_BF16, SMLA_BF16, 1, {{256, 128}, {64, 512}}), 50, 3403,
        "batch-variant, 64 heads, bf16 layout, 50 rows");
}

// The few-row split: 16 heads of 128 + 1024 entries from 1 to 3 rows (72 CTAs a row), then the
// narrow split; other layouts, q_len 2, a partial head group and HCA's wide rows.
TEST_F(DecodeBatchVariant, FewRowSplit) {
  const smla_problem pro =
      make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 1024}});
  check(pro, 1, 3200, "batch-variant, 1 row (few-row split)");
  check(pro, 3, 3201, "batch-variant, 3 rows (few-row split)");
  check(pro, 4, 3202, "batch-variant, 4 rows (narrow split)");
  check(make_problem(8, SMLA_KV_FP8_UNIFORM, SMLA_FP8_E4M3, 2, {{256, 128}, {64, 512}}), 6, 3203,
        "batch-variant, uniform, fp8 q, q_len 2 (few-row split)");
  check(make_problem(16, SMLA_KV_BF16, SMLA_BF16, 1, {{256, 128}, {64, 512}}), 2, 3204,
        "batch-variant, bf16 layout (few-row split)");
  check(make_problem(12, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{61, 128}, {1, 512}}), 5, 3205,
        "batch-variant, 12 heads, pages of 61 and 1 (few-row split)");
  check(make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {2, 8192}}), 2, 3206,
        "batch-variant, HCA 1M (few-row split, segments of 7 tiles)");
}

// The wave splits: fewer, longer segments as rows grow, the most that fit one wave (16 heads of
// 128 + 1024 entries: 5 segments from 30 rows, 3 from 53, 2 from 89 to 132), on both sides of
// each switch; 8 heads on the uniform layout with fp8 q, the heads-on-M kernel (whose wave is
// one CTA per SM) at 32 and 128 heads, and HCA rows at 128K context with MTP.
TEST_F(DecodeBatchVariant, WaveSplits) {
  const smla_problem pro =
      make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 1024}});
  check(pro, 29, 3500, "batch-variant, 29 rows (default split)");
  check(pro, 30, 3501, "batch-variant, 30 rows (5 segments)");
  check(pro, 60, 3502, "batch-variant, 60 rows (3 segments)");
  check(pro, 96, 3503, "batch-variant, 96 rows (2 segments)");
  check(pro, 132, 3506, "batch-variant, 132 rows (2 segments)");
  check(make_problem(8, SMLA_KV_FP8_UNIFORM, SMLA_FP8_E4M3, 1, {{256, 128}, {64, 512}}), 70, 3504,
        "batch-variant, 8 heads, uniform, fp8 q, 70 rows (3 segments)");
  check(make_problem(32, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 1024}}), 40, 3507,
        "batch-variant, 32 heads (heads on M, one CTA per SM), 40 rows (3 segments)");
  check(make_problem(128, SMLA_KV_FP8_UNIFORM, SMLA_FP8_E4M3, 1, {{256, 128}, {64, 1024}}), 16,
        3508, "batch-variant, 128 heads, uniform, fp8 q, 16 rows (2 segments)");
  check(make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 2, {{256, 128}, {2, 1024}}), 48, 3505,
        "batch-variant, HCA 128K, q_len 2, 48 rows (5 segments)");
}

// More segments than the combine kernel loads at once (combine_shape: batches of 40): 68
// one-tile segments, forced.
TEST(CombineKernel, FoldsManySegmentsInBatches) {
  SMLA_REQUIRE_GPU();
  ScopedEnv tile("SMLA_TILE", "hg8.w8.te32.st2.seg1.mb2.mma_sync");
  smla_context* ctx = create_context();
  ASSERT_NE(ctx, nullptr);
  const smla_problem p =
      make_problem(8, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 2048}});
  check_case(spec_for(p, 3, 3300), "68 one-tile segments, 3 rows", {}, ctx);
  smla_context_destroy(ctx);
}

}  // namespace
}  // namespace smla::gpu_test
