// The wgmma entries-on-M kernel (wgmma_em, sm_90a), forced with SMLA_TILE in contexts of their
// own, against the CPU reference on random inputs: 8 and 16 heads per CTA over head counts that
// fill them or not, both fp8 layouts, both q dtypes, split calls (few rows) and whole rows,
// MTP rows, the HCA width, odd page sizes, wide token magnitudes. Inputs hold invalid and
// out-of-range indices, random lengths including 0, and NaN in every unselected cache slot;
// outputs are poisoned before each run. Skipped on other architectures (the key is refused).
#include <string>

#include "gpu_env.h"
#include "support/scoped_env.h"

namespace smla::gpu_test {
namespace {

// The tile of `heads_per_cta` heads with 2-tile (128-entry) segments.
std::string entries_tile(int heads_per_cta) {
  return "hg" + std::to_string(heads_per_cta) + ".w8.te64.st2.seg2.mb1.wgmma_em";
}

class DecodeWgmmaEntries : public ::testing::Test {
 protected:
  void SetUp() override { SMLA_REQUIRE_GPU(); }

  // Checks `spec` in a context of its own with the tile forced; false (and the test skipped)
  // where the device refuses the key.
  bool check(int heads_per_cta, const ref::CaseSpec& spec, const char* what) {
    const std::string tile = entries_tile(heads_per_cta);
    test::ScopedEnv forced("SMLA_TILE", tile.c_str());
    smla_context* ctx = create_context();
    if (ctx == nullptr) return false;
    size_t bytes = 0;
    if (smla_prepare(ctx, &spec.problem, 1, &bytes) != SMLA_OK) {
      const std::string why = smla_last_error();
      smla_context_destroy(ctx);
      EXPECT_NE(why.find("sm_90a only"), std::string::npos) << why;
      return false;
    }
    SCOPED_TRACE(tile);
    check_case(spec, what, {}, ctx);
    smla_context_destroy(ctx);
    return true;
  }
};

TEST_F(DecodeWgmmaEntries, HeadsLayoutsQTypes) {
  int seed = 2000;
  // {heads, heads per CTA}: full CTAs, a partial one, and several head groups.
  for (const auto& [heads, per_cta] : {std::pair{8, 8}, std::pair{16, 16}, std::pair{12, 16},
                                       std::pair{1, 8}, std::pair{32, 16}}) {
    for (smla_kv_layout layout : {SMLA_KV_FP8_PACKED, SMLA_KV_FP8_UNIFORM}) {
      for (smla_dtype q : {SMLA_BF16, SMLA_FP8_E4M3}) {
        const smla_problem p = make_problem(heads, layout, q, 1, {{256, 128}, {64, 1024}});
        for (int rows : {1, 3, 64}) {
          if (!check(per_cta, spec_for(p, rows, ++seed), "wgmma_em")) {
            GTEST_SKIP() << "wgmma_em refused on this device";
          }
        }
      }
    }
  }
}

TEST_F(DecodeWgmmaEntries, RowsQueryLengthsAndSources) {
  const std::pair<int, int> window{256, 128};
  if (!check(16,
             spec_for(make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {window, {64, 1024}}), 257,
                      2100),
             "wgmma_em whole rows")) {
    GTEST_SKIP() << "wgmma_em refused on this device";
  }
  check(8,
        spec_for(make_problem(8, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {window, {64, 512}}), 257, 2101),
        "wgmma_em whole rows, 8 heads");
  check(16,
        spec_for(make_problem(32, SMLA_KV_FP8_UNIFORM, SMLA_FP8_E4M3, 1, {window, {64, 512}}), 257,
                 2102),
        "wgmma_em whole rows, 32 heads");
  check(16,
        spec_for(make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 2, {window, {64, 512}}), 8, 2103),
        "wgmma_em q_len 2");
  check(16, spec_for(make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 4, {window}), 16, 2104),
        "wgmma_em window only");
  check(16,
        spec_for(make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {window, {2, 8192}}), 5, 2105),
        "wgmma_em HCA 1M, split");
  check(
      16,
      spec_for(make_problem(16, SMLA_KV_FP8_UNIFORM, SMLA_BF16, 1, {window, {2, 8192}}), 130, 2106),
      "wgmma_em HCA 1M, whole rows");
  check(
      16,
      spec_for(make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{61, 128}, {1, 300}}), 7, 2107),
      "wgmma_em odd pages");
}

// The tile's dequantized keys are f16 relative to its largest scale byte (exact within 15 of
// it), and P carries 2^(r - R) for the segment's largest tile reference R: tokens spanning
// 2^12 put scale bytes ~14 apart within a tile.
TEST_F(DecodeWgmmaEntries, WideTokenMagnitudes) {
  const smla_problem p =
      make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 1024}});
  ref::CaseSpec spec = spec_for(p, 3, 2200);
  spec.token_magnitude_log2 = 6.0;
  if (!check(16, spec, "token magnitudes 2^U(-6, 6), split rows")) {
    GTEST_SKIP() << "wgmma_em refused on this device";
  }
  spec.num_rows = 200;
  check(16, spec, "token magnitudes 2^U(-6, 6), whole rows");
}

TEST_F(DecodeWgmmaEntries, ManyInvalidIndicesAndNoSink) {
  const smla_problem p =
      make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 512}}, false, true);
  ref::CaseSpec spec = spec_for(p, 20, 2300);
  spec.sources[0].invalid_fraction = 0.5;
  spec.sources[1].invalid_fraction = 0.9;
  if (!check(16, spec, "wgmma_em mostly invalid, split")) {
    GTEST_SKIP() << "wgmma_em refused on this device";
  }
  spec.num_rows = 150;
  check(16, spec, "wgmma_em mostly invalid, whole rows");
}

}  // namespace
}  // namespace smla::gpu_test
