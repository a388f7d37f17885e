// A problem's id in the tuning table changes with everything its kernels and schedule depend on
// and with the mode, and not with q_len (no kernel depends on it) or an unused source's fields.
#include <gtest/gtest.h>

#include <set>

#include "autotune/tuning.h"
#include "cpu/codegen/dsv4_problems.h"

namespace smla {
namespace {

TEST(TuningProblemId, EveryKernelFieldAndTheModeChangeIt) {
  const smla_problem base = test::dsv4_compressed_problem(16, 64, 1024);
  std::vector<smla_problem> variants(12, base);
  variants[1].num_heads = 8;
  variants[2].q_dtype = SMLA_FP8_E4M3;
  variants[3].kv_layout = SMLA_KV_FP8_UNIFORM;
  variants[4].sources[0].page_size = 64;
  variants[5].sources[1].width = 512;
  variants[6].has_sink = 0;
  variants[7].want_lse = 1;
  variants[8].num_sources = 1;
  variants[9].sources[0].kind = SMLA_SOURCE_WINDOW;
  variants[10].sources[1] = {SMLA_SOURCE_PREFIX, 64, 1024, 4};
  variants[11].sources[1] = {SMLA_SOURCE_PREFIX, 64, 1024, 128};
  std::set<uint64_t> ids;
  for (const smla_problem& p : variants) {
    EXPECT_TRUE(ids.insert(tuning_problem_id(p, true)).second) << tuning_problem_text(p, true);
    EXPECT_TRUE(ids.insert(tuning_problem_id(p, false)).second) << tuning_problem_text(p, false);
  }
}

TEST(TuningProblemId, QLenAndUnusedSourcesDoNotChangeIt) {
  const smla_problem base = test::dsv4_window_problem(16);
  smla_problem mtp = base;
  mtp.q_len = 2;
  smla_problem stale = base;
  stale.sources[1] = {SMLA_SOURCE_LIST, 64, 512, 0};  // num_sources is 1
  for (const bool variant : {false, true}) {
    EXPECT_EQ(tuning_problem_id(mtp, variant), tuning_problem_id(base, variant));
    EXPECT_EQ(tuning_problem_id(stale, variant), tuning_problem_id(base, variant));
  }
  EXPECT_EQ(tuning_problem_text(base, false),
            "heads=16;q=bf16;kv=fp8_packed;sources=1;page0=256;width0=128;sink=1;lse=0;"
            "mode=invariant");
  smla_problem hca = test::dsv4_compressed_problem(16, 2, 64);
  hca.sources[0].kind = SMLA_SOURCE_WINDOW;
  hca.sources[1] = {SMLA_SOURCE_PREFIX, 2, 64, 128};
  EXPECT_EQ(tuning_problem_text(hca, true),
            "heads=16;q=bf16;kv=fp8_packed;sources=2;page0=256;width0=128;kind0=window;page1=2;"
            "width1=64;kind1=prefix128;sink=1;lse=0;mode=variant");
}

}  // namespace
}  // namespace smla
