// validate_problem: every field of smla_problem, its bounds, and reserved source kinds.
#include <string>

#include "validate_fixture.h"

namespace smla::validate_test {
namespace {

Status validate(const smla_problem& problem) { return validate_problem(&problem); }

TEST(ValidateProblem, ValidProblemPasses) { EXPECT_TRUE(IsOk(validate(valid_problem()))); }

TEST(ValidateProblem, NullIsRejected) {
  EXPECT_TRUE(IsInvalid(validate_problem(nullptr), {"problem = NULL"}));
}

TEST(ValidateProblem, HeadsFrom1To128) {
  smla_problem problem = valid_problem();
  for (int heads : {1, 8, 128}) {
    problem.num_heads = heads;
    EXPECT_TRUE(IsOk(validate(problem))) << heads;
  }
  for (int heads : {0, 129, -1}) {
    problem.num_heads = heads;
    EXPECT_TRUE(IsInvalid(validate(problem),
                          {"problem.num_heads = " + std::to_string(heads), "must be in [1, 128]"}));
  }
}

TEST(ValidateProblem, QDtypeMustBeKnown) {
  smla_problem problem = valid_problem();
  problem.q_dtype = SMLA_FP8_E4M3;
  EXPECT_TRUE(IsOk(validate(problem)));
  for (int bad : {2, -1}) {
    store_enum_bits(&problem.q_dtype, bad);
    EXPECT_TRUE(IsInvalid(validate(problem), {"problem.q_dtype = " + std::to_string(bad)}));
  }
}

TEST(ValidateProblem, KvLayoutMustBeKnown) {
  smla_problem problem = valid_problem();
  for (smla_kv_layout layout : {SMLA_KV_FP8_UNIFORM, SMLA_KV_FP8_PACKED, SMLA_KV_BF16}) {
    problem.kv_layout = layout;
    EXPECT_TRUE(IsOk(validate(problem))) << layout;
  }
  for (int bad : {3, -1}) {
    store_enum_bits(&problem.kv_layout, bad);
    EXPECT_TRUE(IsInvalid(validate(problem), {"problem.kv_layout = " + std::to_string(bad)}));
  }
}

TEST(ValidateProblem, QLenFrom1To8) {
  smla_problem problem = valid_problem();
  for (int q_len : {1, 2, 8}) {
    problem.q_len = q_len;
    EXPECT_TRUE(IsOk(validate(problem))) << q_len;
  }
  for (int q_len : {0, 9}) {
    problem.q_len = q_len;
    EXPECT_TRUE(IsInvalid(validate(problem),
                          {"problem.q_len = " + std::to_string(q_len), "must be in [1, 8]"}));
  }
}

TEST(ValidateProblem, OneOrTwoSources) {
  smla_problem problem = valid_problem();
  problem.num_sources = 1;
  EXPECT_TRUE(IsOk(validate(problem)));
  for (int sources : {0, 3, -1}) {
    problem.num_sources = sources;
    EXPECT_TRUE(IsInvalid(validate(problem), {"problem.num_sources = " + std::to_string(sources),
                                              "must be in [1, 2]"}));
  }
}

TEST(ValidateProblem, PageSizeAtLeast1) {
  smla_problem problem = valid_problem();
  problem.sources[1].page_size = 1;
  EXPECT_TRUE(IsOk(validate(problem)));
  problem.sources[1].page_size = 576;
  EXPECT_TRUE(IsOk(validate(problem)));
  for (int bad : {0, -64}) {
    problem.sources[1].page_size = bad;
    EXPECT_TRUE(IsInvalid(validate(problem),
                          {"problem.sources[1].page_size = " + std::to_string(bad), ">= 1"}));
  }
}

TEST(ValidateProblem, WidthFrom1To65536) {
  smla_problem problem = valid_problem();
  for (int width : {1, 65536}) {
    problem.sources[0].width = width;
    EXPECT_TRUE(IsOk(validate(problem))) << width;
  }
  // The exact message docs/design.md quotes.
  problem.sources[0].width = 128;
  problem.sources[1].width = 0;
  EXPECT_TRUE(IsInvalid(validate(problem), {"sources[1].width = 0: must be in [1, 65536]"}));
  problem.sources[1].width = 65537;
  EXPECT_TRUE(IsInvalid(validate(problem), {"problem.sources[1].width = 65537"}));
}

TEST(ValidateProblem, SourceKindMustBeKnown) {
  smla_problem problem = valid_problem();
  for (int bad : {3, -1}) {
    store_enum_bits(&problem.sources[0].kind, bad);
    EXPECT_TRUE(IsInvalid(validate(problem), {"problem.sources[0].kind = " + std::to_string(bad),
                                              "SMLA_SOURCE_LIST (0)"}));
  }
}

TEST(ValidateProblem, FlagsAreZeroOrOne) {
  smla_problem problem = valid_problem();
  problem.has_sink = 0;
  problem.want_lse = 0;
  EXPECT_TRUE(IsOk(validate(problem)));
  problem.has_sink = 2;
  EXPECT_TRUE(IsInvalid(validate(problem), {"problem.has_sink = 2", "0 or 1"}));
  problem.has_sink = 1;
  problem.want_lse = -1;
  EXPECT_TRUE(IsInvalid(validate(problem), {"problem.want_lse = -1", "0 or 1"}));
}

TEST(ValidateProblem, UnusedSourceIsIgnored) {
  smla_problem problem = valid_problem();
  problem.num_sources = 1;
  problem.sources[1] = {SMLA_SOURCE_LIST, 0, -5, 0};
  store_enum_bits(&problem.sources[1].kind, 77);
  EXPECT_TRUE(IsOk(validate(problem)));
  problem.sources[1].kind = SMLA_SOURCE_PREFIX;  // ratio 0, but unused
  EXPECT_TRUE(IsOk(validate(problem)));
}

TEST(ValidateProblem, PrefixTakesARatio) {
  smla_problem problem = valid_problem();
  problem.sources[1] = {SMLA_SOURCE_PREFIX, 2, 8192, 128};  // HCA
  EXPECT_TRUE(IsOk(validate(problem)));
  for (int bad : {0, -1, 65537}) {
    problem.sources[1].ratio = bad;
    EXPECT_TRUE(IsInvalid(validate(problem),
                          {"problem.sources[1].ratio = " + std::to_string(bad), "[1, 65536]"}));
  }
  problem.sources[1].ratio = 1;
  EXPECT_TRUE(IsOk(validate(problem)));
}

TEST(ValidateProblem, OnlyAPrefixHasARatio) {
  smla_problem problem = valid_problem();
  problem.sources[0].kind = SMLA_SOURCE_WINDOW;
  EXPECT_TRUE(IsOk(validate(problem)));
  problem.sources[0].ratio = 4;
  EXPECT_TRUE(IsInvalid(validate(problem), {"problem.sources[0].ratio = 4",
                                            "must be 0 unless the source is a prefix"}));
  problem.sources[0] = valid_problem().sources[0];
  problem.sources[1].ratio = 4;  // a list
  EXPECT_TRUE(IsInvalid(validate(problem), {"problem.sources[1].ratio = 4"}));
}

// The kernels address tokens inside a page in 32-bit arithmetic: a page of 2 GiB or more is
// refused (the largest page of each layout passes, one token more does not).
TEST(ValidateProblem, PagesSmallerThan2GiB) {
  smla_problem problem = valid_problem();
  const std::pair<smla_kv_layout, int> largest[] = {
      {SMLA_KV_FP8_UNIFORM, 4194303}, {SMLA_KV_FP8_PACKED, 3677197}, {SMLA_KV_BF16, 2097151}};
  for (const auto& [layout, page_size] : largest) {
    SCOPED_TRACE(layout);
    problem.kv_layout = layout;
    problem.sources[1].page_size = page_size;
    ASSERT_LE(smla_min_page_stride(layout, page_size), INT32_MAX);
    EXPECT_TRUE(IsOk(validate(problem)));
    problem.sources[1].page_size = page_size + 1;
    EXPECT_TRUE(IsError(
        validate(problem), SMLA_ERR_UNSUPPORTED,
        {"problem.sources[1].page_size = " + std::to_string(page_size + 1), "smaller than 2 GiB"}));
  }
  problem.sources[1].page_size = 64;
  problem.sources[0].page_size = 1 << 30;
  EXPECT_TRUE(IsError(validate(problem), SMLA_ERR_UNSUPPORTED, {"problem.sources[0].page_size"}));
}

TEST(ValidateProblem, InvalidWinsOverReservedKind) {
  // The reserved kind comes first in field order; the invalid value after it is still reported.
  smla_problem problem = valid_problem();
  problem.sources[0].kind = SMLA_SOURCE_WINDOW;
  problem.sources[1].width = 0;
  EXPECT_TRUE(IsInvalid(validate(problem), {"problem.sources[1].width = 0"}));
  problem.sources[1].width = 512;
  problem.want_lse = 5;
  EXPECT_TRUE(IsInvalid(validate(problem), {"problem.want_lse = 5"}));
  problem.want_lse = 1;
  problem.num_heads = 0;
  EXPECT_TRUE(IsInvalid(validate(problem), {"problem.num_heads = 0"}));
}

TEST(ValidateMaxRows, From1ToTheRowLimit) {
  for (int max_rows : {1, 8192, kMaxRows}) EXPECT_TRUE(IsOk(validate_max_rows(max_rows)));
  for (int bad : {0, -1, kMaxRows + 1, INT32_MAX}) {
    EXPECT_TRUE(IsInvalid(validate_max_rows(bad),
                          {"max_rows = " + std::to_string(bad), "must be in [1, 16777216]"}));
  }
}

}  // namespace
}  // namespace smla::validate_test
