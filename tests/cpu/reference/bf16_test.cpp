// bf16: decoding is the top half of a float; encoding rounds to nearest, ties to even, overflows
// to infinity, and keeps NaN a NaN (never an infinity).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "reference/codecs.h"

namespace smla::ref {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

float float_from_bits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

TEST(Bf16, Decodes) {
  EXPECT_EQ(bf16_to_float(0x3F80), 1.0f);
  EXPECT_EQ(bf16_to_float(0xC000), -2.0f);
  EXPECT_EQ(bf16_to_float(0x3F81), 1.0f + 0x1p-7f);
  EXPECT_EQ(bf16_to_float(0x0001), 0x1p-133f);
  EXPECT_EQ(bf16_to_float(0x7F80), kInf);
  EXPECT_TRUE(std::isnan(bf16_to_float(0x7FC0)));
}

TEST(Bf16, EveryCodeRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const float value = bf16_to_float(static_cast<uint16_t>(bits));
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(value)))) << bits;
    } else {
      EXPECT_EQ(float_to_bf16(value), bits) << bits;
    }
  }
}

TEST(Bf16, RoundsToNearestTiesToEven) {
  for (uint32_t bits = 0; bits < 0x7F7F; ++bits) {
    const float low = bf16_to_float(static_cast<uint16_t>(bits));
    const float high = bf16_to_float(static_cast<uint16_t>(bits + 1));
    const float midpoint = float_from_bits((bits << 16) | 0x8000u);  // exact halfway
    ASSERT_TRUE(low < midpoint && midpoint < high) << bits;
    const uint32_t even = bits % 2 == 0 ? bits : bits + 1;
    ASSERT_EQ(float_to_bf16(midpoint), even) << bits;
    ASSERT_EQ(float_to_bf16(std::nextafter(midpoint, 0.0f)), bits) << bits;
    ASSERT_EQ(float_to_bf16(std::nextafter(midpoint, kInf)), bits + 1) << bits;
    ASSERT_EQ(float_to_bf16(-midpoint), 0x8000u | even) << bits;
  }
}

TEST(Bf16, OverflowAndNaN) {
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7F80) << "rounds up to inf";
  EXPECT_EQ(float_to_bf16(float_from_bits(0x7F7F7FFFu)), 0x7F7F) << "just below the midpoint";
  EXPECT_EQ(float_to_bf16(kInf), 0x7F80);
  EXPECT_EQ(float_to_bf16(-kInf), 0xFF80);
  EXPECT_EQ(float_to_bf16(-0.0f), 0x8000);
  // A NaN whose payload is only in the low half must not truncate to infinity.
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(float_from_bits(0x7F800001u)))));
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(float_from_bits(0xFF800001u)))));
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::quiet_NaN()), 0x7FC0);
}

}  // namespace
}  // namespace smla::ref
