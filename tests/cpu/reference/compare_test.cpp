// compare() passes a bf16-rounded copy of the reference and catches each kind of wrong result.
#include "reference/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "random_spec.h"
#include "reference/codecs.h"

namespace smla::ref::testing {
namespace {

constexpr int kDim = SMLA_HEAD_DIM;
constexpr float kInf = std::numeric_limits<float>::infinity();

// A kernel's output as the reference would round it: bf16 out, fp32 lse, contiguous.
struct KernelOutput {
  std::vector<uint16_t> out;
  std::vector<float> lse;
};

KernelOutput rounded_copy(const ReferenceResult& reference) {
  KernelOutput copy;
  for (double value : reference.out) copy.out.push_back(float_to_bf16(static_cast<float>(value)));
  for (double value : reference.lse) copy.lse.push_back(static_cast<float>(value));
  return copy;
}

class CompareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_ = make_random_case(small_spec(SMLA_KV_FP8_PACKED, SMLA_BF16, 4, 6, 11));
    reference_ = attention(c_.problem, c_.host_args());
    for (int r = 0; r < c_.num_rows && empty_row_ < 0; ++r) {
      if (std::isinf(reference_.lse[r * heads()])) empty_row_ = r;
    }
    ASSERT_GE(empty_row_, 0) << "random_case makes one row empty";
    for (int r = 0; r < c_.num_rows && full_row_ < 0; ++r) {
      if (std::isfinite(reference_.lse[r * heads() + finite_head()])) full_row_ = r;
    }
    ASSERT_GE(full_row_, 0);
  }
  int heads() const { return c_.problem.num_heads; }
  // A head whose sink is finite, so its out is not 0.
  int finite_head() const {
    for (int h = 0; h < heads(); ++h) {
      if (std::isfinite(c_.sink[h])) return h;
    }
    return 0;
  }
  Comparison run(const KernelOutput& output, bool with_lse = true) const {
    return compare(c_.problem, c_.num_rows, reference_, output.out.data(), heads() * kDim, kDim,
                   with_lse ? output.lse.data() : nullptr);
  }
  size_t element(int row, int head, int d) const {
    return (static_cast<size_t>(row) * heads() + head) * kDim + d;
  }

  HostCase c_;
  ReferenceResult reference_;
  int empty_row_ = -1;
  int full_row_ = -1;
  const Tolerance tolerance_{};
};

TEST_F(CompareTest, PassesRoundedCopy) {
  const Comparison result = run(rounded_copy(reference_));
  EXPECT_TRUE(result.passed(tolerance_)) << result.summary();
  EXPECT_GT(result.out_rel_l2, 0.0) << "bf16 rounding is visible";
  EXPECT_LE(result.out_rel_l2, 0x1p-8);
  EXPECT_LE(result.lse_max_abs, 1e-5);
  EXPECT_EQ(result.elements, int64_t{c_.num_rows} * heads() * kDim);
  EXPECT_TRUE(run(rounded_copy(reference_), false).passed(tolerance_)) << "lse not asked for";
}

TEST_F(CompareTest, PassesNegativeZeroInEmptyRow) {
  KernelOutput output = rounded_copy(reference_);
  output.out[element(empty_row_, 0, 3)] = 0x8000;
  EXPECT_TRUE(run(output).passed(tolerance_));
}

TEST_F(CompareTest, CatchesEachKindOfError) {
  const double norm = [&] {
    double sum = 0;
    for (double value : reference_.out) sum += value * value;
    return std::sqrt(sum);
  }();
  const size_t some = element(full_row_, finite_head(), 7);
  {
    SCOPED_TRACE("one wrong element");
    KernelOutput output = rounded_copy(reference_);
    output.out[some] = float_to_bf16(static_cast<float>(reference_.out[some] + 0.5 * norm));
    const Comparison result = run(output);
    EXPECT_FALSE(result.passed(tolerance_)) << result.summary();
    EXPECT_NEAR(result.out_rel_l2, 0.5, 0.01);
  }
  for (uint16_t bad : {uint16_t{0x7FC0}, float_to_bf16(kInf), float_to_bf16(-kInf)}) {
    SCOPED_TRACE(::testing::Message() << "non-finite out " << bad);
    KernelOutput output = rounded_copy(reference_);
    output.out[some] = bad;
    const Comparison result = run(output);
    EXPECT_FALSE(result.passed(tolerance_));
    EXPECT_EQ(result.nan_count, 1);
    EXPECT_TRUE(std::isfinite(result.out_rel_l2));
  }
  {
    SCOPED_TRACE("nonzero out in an empty row");
    KernelOutput output = rounded_copy(reference_);
    output.out[element(empty_row_, heads() - 1, kDim - 1)] = float_to_bf16(1e-30f);
    const Comparison result = run(output);
    EXPECT_FALSE(result.passed(tolerance_));
    EXPECT_EQ(result.empty_row_errors, 1);
  }
  {
    SCOPED_TRACE("finite lse in an empty row");
    KernelOutput output = rounded_copy(reference_);
    output.lse[empty_row_ * heads()] = 0.0f;
    EXPECT_EQ(run(output).empty_row_errors, 1);
  }
  {
    SCOPED_TRACE("wrong lse");
    KernelOutput output = rounded_copy(reference_);
    output.lse[full_row_ * heads() + finite_head()] += 0.01f;
    const Comparison result = run(output);
    EXPECT_FALSE(result.passed(tolerance_));
    EXPECT_NEAR(result.lse_max_abs, 0.01, 1e-4);
    EXPECT_TRUE(result.passed(Tolerance{1e-2, 0.02})) << "within a looser tolerance";
  }
  {
    SCOPED_TRACE("lse +inf in a non-empty row, and NaN lse");
    KernelOutput output = rounded_copy(reference_);
    output.lse[full_row_ * heads() + finite_head()] = kInf;
    EXPECT_EQ(run(output).lse_max_abs, kInf);
    output.lse[full_row_ * heads() + finite_head()] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_EQ(run(output).nan_count, 1);
  }
}

TEST_F(CompareTest, ReadsThroughStrides) {
  const int64_t head_stride = kDim + 8, row_stride = heads() * head_stride + 16;
  const KernelOutput copy = rounded_copy(reference_);
  std::vector<uint16_t> strided(c_.num_rows * row_stride, 0x7FC0);  // NaN in the gaps
  for (int r = 0; r < c_.num_rows; ++r) {
    for (int h = 0; h < heads(); ++h) {
      for (int d = 0; d < kDim; ++d) {
        strided[r * row_stride + h * head_stride + d] = copy.out[element(r, h, d)];
      }
    }
  }
  const Comparison result = compare(c_.problem, c_.num_rows, reference_, strided.data(), row_stride,
                                    head_stride, copy.lse.data());
  EXPECT_TRUE(result.passed(tolerance_)) << result.summary();
}

TEST(Compare, AllZeroReference) {
  smla_problem problem{};
  problem.num_heads = 1;
  ReferenceResult reference;
  reference.out.assign(kDim, 0.0);
  reference.lse.assign(1, std::numeric_limits<double>::infinity());
  std::vector<uint16_t> out(kDim, 0);
  EXPECT_EQ(compare(problem, 1, reference, out.data(), kDim, kDim, nullptr).out_rel_l2, 0.0);
  out[0] = float_to_bf16(1.0f);
  const Comparison result = compare(problem, 1, reference, out.data(), kDim, kDim, nullptr);
  EXPECT_EQ(result.out_rel_l2, kInf);
  EXPECT_EQ(result.empty_row_errors, 1);
  EXPECT_NE(result.summary().find("1 empty-row errors"), std::string::npos) << result.summary();
}

}  // namespace
}  // namespace smla::ref::testing
