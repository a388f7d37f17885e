// e4m3 (OCP FP8 E4M3FN): every code decodes to its value, and encoding rounds to the nearest
// value, ties to the even code, saturating at 448, through the subnormals.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reference/codecs.h"

namespace smla::ref {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(E4m3, DecodesEveryCode) {
  const struct {
    uint8_t bits;
    float value;
  } cases[] = {
      {0x00, 0.0f},   {0x01, 0x1p-9f}, {0x07, 7 * 0x1p-9f}, {0x08, 0x1p-6f}, {0x38, 1.0f},
      {0x39, 1.125f}, {0x3F, 1.875f},  {0x40, 2.0f},        {0x78, 256.0f},  {0x7E, 448.0f},
      {0xB8, -1.0f},  {0xFE, -448.0f}, {0x81, -0x1p-9f},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(int{c.bits});
    EXPECT_EQ(e4m3_to_float(c.bits), c.value);
  }
  EXPECT_TRUE(std::signbit(e4m3_to_float(0x80)) && e4m3_to_float(0x80) == 0.0f);
  EXPECT_TRUE(std::isnan(e4m3_to_float(0x7F)));
  EXPECT_TRUE(std::isnan(e4m3_to_float(0xFF)));
  // Positive codes increase strictly; negative codes mirror them.
  for (int bits = 1; bits <= 0x7E; ++bits) {
    EXPECT_LT(e4m3_to_float(bits - 1), e4m3_to_float(bits)) << bits;
    EXPECT_EQ(e4m3_to_float(bits | 0x80), -e4m3_to_float(bits)) << bits;
  }
}

TEST(E4m3, EveryFiniteCodeRoundTrips) {
  for (int bits = 0; bits < 256; ++bits) {
    if (bits == 0x7F || bits == 0xFF || bits == 0x80) continue;
    EXPECT_EQ(float_to_e4m3(e4m3_to_float(bits)), bits) << bits;
  }
  EXPECT_EQ(float_to_e4m3(-0.0f), 0x00) << "no negative zero";
}

// Between two neighbouring codes: below the midpoint the lower, above it the upper, at it the
// even one (the code's last bit is the mantissa's last bit, also across a binade).
TEST(E4m3, RoundsToNearestTiesToEven) {
  for (int bits = 0; bits < 0x7E; ++bits) {
    SCOPED_TRACE(bits);
    const float low = e4m3_to_float(bits);
    const float high = e4m3_to_float(bits + 1);
    const float midpoint = (low + high) / 2;  // exact: e4m3 values have 4 significant bits
    const int even = bits % 2 == 0 ? bits : bits + 1;
    EXPECT_EQ(float_to_e4m3(midpoint), even);
    EXPECT_EQ(float_to_e4m3(std::nextafter(midpoint, 0.0f)), bits);
    EXPECT_EQ(float_to_e4m3(std::nextafter(midpoint, kInf)), bits + 1);
    EXPECT_EQ(float_to_e4m3(-midpoint), even == 0 ? 0x00 : 0x80 | even) << "negative tie";
  }
  EXPECT_EQ(float_to_e4m3(1.0625f), 0x38) << "1 + 1/16: tie, 1.0 is even";
  EXPECT_EQ(float_to_e4m3(1.1875f), 0x3A) << "1.125 + 1/16: tie, 1.25 is even";
}

TEST(E4m3, Subnormals) {
  EXPECT_EQ(float_to_e4m3(0x1p-9f), 0x01);
  EXPECT_EQ(float_to_e4m3(0x1p-10f), 0x00) << "half the smallest: tie to 0";
  EXPECT_EQ(float_to_e4m3(std::nextafter(0x1p-10f, kInf)), 0x01);
  EXPECT_EQ(float_to_e4m3(3 * 0x1p-10f), 0x02) << "1.5 steps: tie to 2";
  EXPECT_EQ(float_to_e4m3(5 * 0x1p-10f), 0x02) << "2.5 steps: tie to 2";
  EXPECT_EQ(float_to_e4m3(15 * 0x1p-10f), 0x08) << "7.5 steps: tie to 2^-6 (even)";
  EXPECT_EQ(float_to_e4m3(-0x1p-9f), 0x81);
  EXPECT_EQ(float_to_e4m3(-0x1p-11f), 0x00) << "negative underflow is +0";
  EXPECT_EQ(float_to_e4m3(1e-30f), 0x00);
}

TEST(E4m3, SaturatesAt448) {
  for (float value : {448.0f, 449.0f, 464.0f, 480.0f, 1e6f, 3.4e38f, kInf}) {
    EXPECT_EQ(float_to_e4m3(value), 0x7E) << value;
    EXPECT_EQ(float_to_e4m3(-value), 0xFE) << -value;
  }
  EXPECT_EQ(float_to_e4m3(std::numeric_limits<float>::quiet_NaN()), 0x7F);
  EXPECT_EQ(float_to_e4m3(-std::numeric_limits<float>::quiet_NaN()), 0x7F);
}

}  // namespace
}  // namespace smla::ref
