// The wgmma kernel (sm_90a), forced with SMLA_TILE in a context of its own, against the CPU
// reference on random inputs: 64 and 128 heads, both fp8 layouts, both q dtypes, row counts
// around one wave, MTP rows, the HCA width, odd page sizes. Inputs hold invalid and
// out-of-range indices, random lengths including 0, and NaN in every unselected cache slot;
// outputs are poisoned before each run. Skipped on other architectures (the key is refused).
#include <cmath>
#include <string>

#include "gpu_env.h"
#include "support/scoped_env.h"

namespace smla::gpu_test {
namespace {

constexpr const char* kWgmmaTile = "hg64.w8.te64.st2.seg256.mb1.wgmma";

class DecodeWgmma : public ::testing::Test {
 protected:
  void SetUp() override {
    SMLA_REQUIRE_GPU();
    ctx_ = create_context();
    ASSERT_NE(ctx_, nullptr);
    // The device must take the path: prepare one problem and skip where the key is refused.
    const smla_problem probe =
        make_problem(64, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 512}});
    size_t bytes = 0;
    if (smla_prepare(ctx_, &probe, 1, &bytes) != SMLA_OK) {
      const std::string why = smla_last_error();
      ASSERT_NE(why.find("sm_90a only"), std::string::npos) << why;
      GTEST_SKIP() << why;
    }
  }
  void TearDown() override { smla_context_destroy(ctx_); }

  void check(const smla_problem& p, int rows, uint64_t seed, const char* what) {
    check_case(spec_for(p, rows, seed), what, {}, ctx_);
  }

  ScopedEnv tile_{"SMLA_TILE", kWgmmaTile};
  smla_context* ctx_ = nullptr;
};

TEST_F(DecodeWgmma, HeadsLayoutsQTypes) {
  int seed = 1000;
  for (int heads : {64, 128}) {
    for (smla_kv_layout layout : {SMLA_KV_FP8_PACKED, SMLA_KV_FP8_UNIFORM}) {
      for (smla_dtype q : {SMLA_BF16, SMLA_FP8_E4M3}) {
        const smla_problem p = make_problem(heads, layout, q, 1, {{256, 128}, {64, 1024}});
        for (int rows : {1, 3, 64}) check(p, rows, ++seed, "wgmma");
      }
    }
  }
  // Without the lse, fp8 q on the uniform layout multiplies Q K^T in e4m3 (compute_scores);
  // with it (above) in bf16.
  for (int heads : {64, 128}) {
    const smla_problem p = make_problem(heads, SMLA_KV_FP8_UNIFORM, SMLA_FP8_E4M3, 1,
                                        {{256, 128}, {64, 1024}}, true, false);
    for (int rows : {3, 64}) check(p, rows, ++seed, "wgmma e4m3 scores without lse");
  }
}

// The e4m3 scores' error grows with the logits (the tensor cores keep their sums to ~13 bits):
// out stays within tolerance at 8x the other tests' softmax scale (|s| up to ~80), and with the
// lse asked for, the bf16 products keep the lse within it too.
TEST_F(DecodeWgmma, LargerLogits) {
  for (bool lse : {false, true}) {
    const smla_problem p = make_problem(128, SMLA_KV_FP8_UNIFORM, SMLA_FP8_E4M3, 1,
                                        {{256, 128}, {64, 1024}}, true, lse);
    ref::CaseSpec spec = spec_for(p, 64, lse ? 1401 : 1400);
    spec.softmax_scale *= 8.0f;
    check_case(spec, lse ? "wgmma 8x logits, lse" : "wgmma 8x logits, e4m3 scores", {}, ctx_);
  }
}

TEST_F(DecodeWgmma, RowsQueryLengthsAndSources) {
  const std::pair<int, int> window{256, 128};
  check(make_problem(64, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {window, {64, 512}}), 257, 1100,
        "wgmma rows");
  check(make_problem(128, SMLA_KV_FP8_PACKED, SMLA_BF16, 2, {window, {64, 512}}), 8, 1101,
        "wgmma q_len 2");
  check(make_problem(64, SMLA_KV_FP8_PACKED, SMLA_BF16, 4, {window}), 16, 1102, "wgmma window");
  check(make_problem(64, SMLA_KV_FP8_UNIFORM, SMLA_BF16, 1, {window, {2, 8192}}), 5, 1103,
        "wgmma HCA 1M");
  check(make_problem(64, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{61, 128}, {1, 300}}), 7, 1104,
        "wgmma odd pages");
  // fp8 q on the uniform layout without the lse: e4m3 products straight from the gathered
  // stages; with it, bf16 ones.
  check(
      make_problem(128, SMLA_KV_FP8_UNIFORM, SMLA_FP8_E4M3, 2, {{61, 128}, {1, 300}}, true, false),
      9, 1105, "wgmma e4m3 scores, odd pages, q_len 2");
  check(make_problem(64, SMLA_KV_FP8_UNIFORM, SMLA_FP8_E4M3, 1, {window, {2, 8192}}, true, false),
        5, 1106, "wgmma e4m3 scores, HCA 1M");
  check(make_problem(96, SMLA_KV_FP8_UNIFORM, SMLA_FP8_E4M3, 1, {window, {64, 1024}}, true, false),
        66, 1107, "wgmma e4m3 scores, a partial head group");
  check(make_problem(64, SMLA_KV_FP8_UNIFORM, SMLA_FP8_E4M3, 2, {window, {2, 8192}}, false, false),
        6, 1108, "wgmma e4m3 scores without sink, HCA 1M, q_len 2");
  check(make_problem(128, SMLA_KV_FP8_UNIFORM, SMLA_FP8_E4M3, 2, {{61, 128}, {1, 300}}), 9, 1109,
        "wgmma uniform fp8 q with lse, odd pages, q_len 2");
}

TEST_F(DecodeWgmma, ManyInvalidIndicesAndNoSink) {
  const smla_problem p =
      make_problem(64, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 512}}, false, true);
  ref::CaseSpec spec = spec_for(p, 20, 1200);
  spec.sources[0].invalid_fraction = 0.5;
  spec.sources[1].invalid_fraction = 0.9;
  check_case(spec, "wgmma mostly invalid", {}, ctx_);
  // One source: an eighth of the rows are empty and walk no tile, so the epilogue meets q's
  // copies still in flight unless it waits for them (no sink load delays it).
  const smla_problem window =
      make_problem(64, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}}, false, false);
  check(window, 64, 1201, "wgmma empty rows without sink");
}

// Scale bytes above 134 (tokens of magnitude 2^15 and more) take the dequantization's
// two-factor path, per thread beside the one-factor path in the same warp. The small softmax
// scale keeps the scores of such tokens near 1.
TEST_F(DecodeWgmma, ScaleBytesAbove134) {
  const smla_problem p =
      make_problem(64, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 512}});
  for (int rows : {3, 64}) {
    ref::CaseSpec spec = spec_for(p, rows, 1300 + rows);
    spec.token_magnitude_log2 = 17.0;
    spec.softmax_scale = std::ldexp(0.044194173824159216f, -17);
    check_case(spec, "wgmma token magnitudes 2^U(-17, 17)", {}, ctx_);
  }
}

}  // namespace
}  // namespace smla::gpu_test
