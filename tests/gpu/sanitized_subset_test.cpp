// A representative subset small enough for compute-sanitizer (memcheck, racecheck): every
// layout, both q dtypes, split calls, prefix items and whole rows, every decode kernel, odd
// pages. Caches sit in allocations of exactly their size, so a read past a cache is an
// out-of-bounds access memcheck reports.
#include "gpu_env.h"
#include "support/scoped_env.h"

namespace smla::gpu_test {
namespace {

TEST(Sanitized, RepresentativeSubset) {
  SMLA_REQUIRE_GPU();
  DeviceCaseOptions exact;
  exact.guard_bytes = 0;
  struct Case {
    smla_problem problem;
    int rows;
  };
  const Case cases[] = {
      {make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 512}}), 3},
      {make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 512}}), 60},
      {make_problem(32, SMLA_KV_FP8_UNIFORM, SMLA_FP8_E4M3, 1, {{256, 128}, {2, 300}}), 2},
      {make_problem(8, SMLA_KV_BF16, SMLA_BF16, 1, {{61, 128}, {1, 200}}), 4},
      {make_problem(64, SMLA_KV_FP8_PACKED, SMLA_FP8_E4M3, 2, {{256, 128}}), 30},
      // The heads-on-M kernel's whole-row folds (100 rows do not split; 5 segments).
      {make_problem(32, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 512}}), 100},
      // 128 heads: on sm_90a the wgmma kernel in 4 segments, split (2 rows) and folded in
      // local memory (32 rows do not split).
      {make_problem(128, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 512}}), 2},
      {make_problem(128, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 512}}), 32},
      // Prefix items of 128 + 1024 entries (9 segments of 128; on sm_90a 6 of 192 at 128
      // heads): the entries-on-M kernel at 100 rows (4 segments folded), the heads-on-M kernel
      // at 60 (6), the wgmma kernel at 24 (3).
      {make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 1024}}), 100},
      {make_problem(32, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 1024}}), 60},
      {make_problem(128, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 1024}}), 24},
  };
  uint64_t seed = 1000;
  for (const Case& c : cases) {
    ref::CaseSpec spec;
    spec.problem = c.problem;
    spec.num_rows = c.rows;
    spec.seed = ++seed;
    check_case(spec, "sanitized", exact);
  }
}

// A source without pages (num_pages 0, cache NULL, as validation allows): every entry of it is
// skipped, so the row attends to the other source only, and no copy names the NULL cache.
TEST(Sanitized, SourceWithoutPages) {
  SMLA_REQUIRE_GPU();
  GpuEnv& env = GpuEnv::get();
  for (smla_kv_layout layout : {SMLA_KV_FP8_PACKED, SMLA_KV_BF16}) {
    const ref::CaseSpec spec =
        spec_for(make_problem(16, layout, SMLA_BF16, 1, {{256, 128}, {64, 512}}), 5, 1300);
    if (prewarmed(spec.problem)) continue;
    ref::HostCase host = ref::make_random_case(spec);
    host.sources[1].num_pages = 0;
    host.sources[1].cache.clear();
    DeviceCaseOptions exact;
    exact.guard_bytes = 0;
    DeviceCase dc;
    ASSERT_TRUE(DeviceCase::upload(*env.session, host, exact, &dc).is_ok());
    ASSERT_EQ(dc.args().sources[1].cache, nullptr);
    const ref::ReferenceResult reference = ref::attention(host.problem, host.host_args());
    const CheckResult result = run_and_compare(env.ctx, *env.session, dc, reference, env.stream);
    ASSERT_TRUE(result.status.is_ok()) << result.status.message();
    EXPECT_TRUE(result.comparison.passed({})) << result.comparison.summary();
  }
}

// Window and prefix sources: block-table reads stay inside the tables and the pages they name
// (an HCA chunk over a cached prefix beside a new request, at 16 and 128 heads).
TEST(Sanitized, StructuredSources) {
  SMLA_REQUIRE_GPU();
  DeviceCaseOptions exact;
  exact.guard_bytes = 0;
  uint64_t seed = 1400;
  for (const int heads : {16, 128}) {
    const smla_problem hca = with_structured_sources(
        make_problem(heads, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {2, 64}}), 128);
    check_case(requests_spec(hca, {5, 2}, {700, 0}, ++seed), "sanitized, structured", exact,
               nullptr, CallEntry::kPrefill);
  }
}

// Batch-variant mode: the few-row split (20 one-tile segments a row, so the combine kernel's
// two-dims-a-thread shape), a wave split, and on sm_90a the wgmma kernel (64 CTAs of 64 heads;
// the default tiles elsewhere: bf16 q copied by cp.async, the output through shared memory;
// and fp8 q on the uniform layout: e4m3 products without the lse, bf16 ones with it).
TEST(Sanitized, BatchVariantMode) {
  SMLA_REQUIRE_GPU();
  smla_context* ctx = nullptr;
  {
    ScopedEnv variant("SMLA_BATCH_VARIANT", "1");
    ctx = create_context();
  }
  ASSERT_NE(ctx, nullptr);
  DeviceCaseOptions exact;
  exact.guard_bytes = 0;
  const smla_problem p =
      make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 512}});
  check_case(spec_for(p, 2, 1100), "sanitized, few-row split", exact, ctx);
  // 60 rows: the wave split of 3 segments of 7 tiles.
  check_case(spec_for(p, 60, 1101), "sanitized, wave split", exact, ctx);
  const smla_problem wide = make_problem(64, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}});
  check_case(spec_for(wide, 64, 1200), "sanitized, wgmma", exact, ctx);
  // fp8 q on the uniform layout without the lse: warpgroup 1 converts values while warpgroup 0
  // multiplies.
  const smla_problem e4m3 =
      make_problem(64, SMLA_KV_FP8_UNIFORM, SMLA_FP8_E4M3, 1, {{256, 128}}, true, false);
  check_case(spec_for(e4m3, 64, 1201), "sanitized, wgmma e4m3 scores", exact, ctx);
  // With the lse: bf16 products, fp8 q converted and stored into shared memory by the threads.
  const smla_problem fp8_q = make_problem(64, SMLA_KV_FP8_UNIFORM, SMLA_FP8_E4M3, 1, {{256, 128}});
  check_case(spec_for(fp8_q, 64, 1202), "sanitized, wgmma, uniform fp8 q with lse", exact, ctx);
  smla_context_destroy(ctx);
}

}  // namespace
}  // namespace smla::gpu_test
