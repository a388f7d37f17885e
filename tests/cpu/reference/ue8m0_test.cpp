// ue8m0 scale bytes: e means 2^(e - 127); 0xFF is NaN.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/codecs.h"

namespace smla::ref {
namespace {

TEST(Ue8m0, PowersOfTwo) {
  EXPECT_EQ(ue8m0_to_double(127), 1.0);
  EXPECT_EQ(ue8m0_to_double(128), 2.0);
  EXPECT_EQ(ue8m0_to_double(120), 0.0078125);
  EXPECT_EQ(ue8m0_to_double(0), 0x1p-127);
  EXPECT_EQ(ue8m0_to_double(254), 0x1p127);
  for (int bits = 0; bits < 255; ++bits) {
    EXPECT_EQ(ue8m0_to_double(static_cast<uint8_t>(bits)), std::ldexp(1.0, bits - 127)) << bits;
  }
  EXPECT_TRUE(std::isnan(ue8m0_to_double(255)));
}

}  // namespace
}  // namespace smla::ref
