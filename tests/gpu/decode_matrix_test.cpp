// Decode against the CPU reference on random inputs, over the problem space of the API:
// head counts, layouts, q dtypes, row counts (split, prefix items, whole rows), MTP q_len, source
// shapes, page sizes. Inputs hold invalid and out-of-range indices, random lengths including 0, and
// NaN in every unselected cache slot; outputs are poisoned before each run.
#include "gpu_env.h"

namespace smla::gpu_test {
namespace {

constexpr smla_kv_layout kLayouts[] = {SMLA_KV_FP8_PACKED, SMLA_KV_FP8_UNIFORM, SMLA_KV_BF16};
constexpr smla_dtype kQTypes[] = {SMLA_BF16, SMLA_FP8_E4M3};

TEST(DecodeMatrix, HeadsLayoutsQTypes) {
  SMLA_REQUIRE_GPU();
  int seed = 100;
  // 24: a partial group of the heads-on-M kernel's 32-head CTAs (there fp8 q on the uniform
  // layout takes the f16 scores, where 32, 64 and 128 heads take e4m3 ones on sm_90a).
  for (int heads : {1, 2, 8, 16, 24, 32, 64, 128}) {
    for (smla_kv_layout layout : kLayouts) {
      for (smla_dtype q : kQTypes) {
        const smla_problem p = make_problem(heads, layout, q, 1, {{256, 128}, {64, 512}});
        check_case(spec_for(p, 3, ++seed), "split rows");
        // Past the default's split (64 heads: 26 rows; 128: 31, the wgmma kernel's folds).
        check_case(spec_for(p, heads >= 64 ? 32 : 64, ++seed), "whole rows");
      }
    }
  }
}

TEST(DecodeMatrix, RowCounts) {
  SMLA_REQUIRE_GPU();
  const smla_problem p =
      make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 1024}});
  for (int rows : {1, 3, 64, 257}) check_case(spec_for(p, rows, 200 + rows), "rows");
}

TEST(DecodeMatrix, MtpQueryLengths) {
  SMLA_REQUIRE_GPU();
  for (int q_len : {1, 2, 4}) {
    const smla_problem p =
        make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, q_len, {{256, 128}, {64, 512}});
    check_case(spec_for(p, 8 * q_len, 300 + q_len), "q_len");
  }
}

TEST(DecodeMatrix, SourceShapes) {
  SMLA_REQUIRE_GPU();
  const std::pair<int, int> window{256, 128};
  for (smla_kv_layout layout : kLayouts) {
    const smla_problem shapes[] = {
        make_problem(16, layout, SMLA_BF16, 1, {window}),
        make_problem(16, layout, SMLA_BF16, 1, {window, {64, 512}}),
        make_problem(16, layout, SMLA_BF16, 1, {window, {64, 1024}}),
        make_problem(16, layout, SMLA_BF16, 1, {window, {2, 1024}}),
        make_problem(16, layout, SMLA_BF16, 1, {window, {2, 8192}}),
    };
    int seed = 400 + 10 * static_cast<int>(layout);
    for (const smla_problem& p : shapes) {
      check_case(spec_for(p, 4, ++seed), "sources");
      check_case(spec_for(p, 70, ++seed), "sources");
    }
  }
}

TEST(DecodeMatrix, OddPageSizes) {
  SMLA_REQUIRE_GPU();
  for (int page : {1, 61}) {
    for (smla_kv_layout layout : kLayouts) {
      const smla_problem p = make_problem(8, layout, SMLA_BF16, 1, {{page, 128}, {page, 300}});
      check_case(spec_for(p, 5, 500 + page), "odd pages");
      check_case(spec_for(p, 60, 600 + page), "odd pages");
    }
  }
}

TEST(DecodeMatrix, InfiniteSinksAndNoSink) {
  SMLA_REQUIRE_GPU();
  for (bool sink : {true, false}) {
    const smla_problem p =
        make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 512}}, sink, true);
    ref::CaseSpec spec = spec_for(p, 6, 700);
    spec.infinite_sinks = sink;
    check_case(spec, "sinks");
  }
}

// The packed layout's value product moves each entry's scale into its f16 probability, relative
// to the segment's largest (decode_common.cuh, ValueScales): tokens whose magnitudes span 2^12
// put scale bytes ~14 apart within a segment, and must still meet the tolerance.
TEST(DecodeMatrix, WideTokenMagnitudes) {
  SMLA_REQUIRE_GPU();
  for (int heads : {16, 64}) {
    const smla_problem p =
        make_problem(heads, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 1024}});
    ref::CaseSpec spec = spec_for(p, 3, 900 + heads);
    spec.token_magnitude_log2 = 6.0;
    check_case(spec, "token magnitudes 2^U(-6, 6), split rows");
    // Prefix items (16 heads: 4 of 9 segments folded; 64 heads: 6), then whole rows.
    spec.num_rows = heads >= 64 ? 32 : 100;
    check_case(spec, "token magnitudes 2^U(-6, 6), prefix items");
    spec.num_rows = heads >= 64 ? 48 : 250;
    check_case(spec, "token magnitudes 2^U(-6, 6), whole rows");
  }
}

TEST(DecodeMatrix, ManyInvalidIndices) {
  SMLA_REQUIRE_GPU();
  const smla_problem p =
      make_problem(32, SMLA_KV_FP8_UNIFORM, SMLA_FP8_E4M3, 1, {{256, 128}, {64, 512}});
  ref::CaseSpec spec = spec_for(p, 20, 800);
  spec.sources[0].invalid_fraction = 0.5;
  spec.sources[1].invalid_fraction = 0.9;
  check_case(spec, "mostly invalid");
}

}  // namespace
}  // namespace smla::gpu_test
