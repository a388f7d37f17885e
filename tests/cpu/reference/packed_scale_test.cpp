// The packed layout's per-64-dim scale: 2^ceil(log2(amax / 448)) as a ue8m0 byte, chosen so the
// largest value of the tile lands in (224, 448]; an all-zero tile gets 2^0 (byte 127).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "reference/codecs.h"

namespace smla::ref {
namespace {

constexpr int kDim = SMLA_HEAD_DIM;
constexpr int kScaleOffset = SMLA_PACKED_DATA_BYTES;

// Encodes a token whose tile 0 has amax `amax` (at dim 5) and `others` elsewhere in the tile;
// the other tiles hold `others` too. Returns the encoded bytes.
std::vector<uint8_t> encode_tile0_amax(float amax, float others = 1.0f) {
  std::vector<float> values(kDim, others);
  values[5] = amax;
  std::vector<uint8_t> bytes(SMLA_PACKED_TOKEN_BYTES, 0xAB);
  encode_token_bytes(SMLA_KV_FP8_PACKED, values.data(), bytes.data());
  return bytes;
}

TEST(PackedScale, SmallestPowerOfTwoThatFits) {
  const struct {
    float amax;
    int scale_byte;
  } cases[] = {
      {448.0f, 127},                        // exactly 448: 2^0
      {std::nextafter(448.0f, 1e9f), 128},  // just above: 2^1
      {1.0f, 119},                          // 1/448 = 2^-8.8: 2^-8
      {14.0f, 122},                         // 448 * 2^-5 exactly stays at 2^-5
      {std::nextafter(14.0f, 1e9f), 123},
      {896.0f, 128},    // 448 * 2
      {3000.0f, 130},   // 3000/448 = 6.7: 2^3
      {-3000.0f, 130},  // amax is of magnitudes
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.amax);
    const std::vector<uint8_t> bytes = encode_tile0_amax(c.amax);
    EXPECT_EQ(bytes[kScaleOffset], c.scale_byte);
    const double scale = ue8m0_to_double(bytes[kScaleOffset]);
    EXPECT_EQ(bytes[5], float_to_e4m3(static_cast<float>(c.amax / scale)));
  }
  EXPECT_EQ(encode_tile0_amax(448.0f)[5], 0x7E);
}

TEST(PackedScale, ZeroTileAndLayout) {
  std::vector<float> values(kDim, 0.0f);
  for (int d = 64; d < 128; ++d) values[d] = 2.0f;           // tile 1: amax 2 -> 2^-7 (byte 120)
  for (int d = 448; d < kDim; ++d) values[d] = 1000.0f + d;  // rope: bf16, unscaled
  std::vector<uint8_t> bytes(SMLA_PACKED_TOKEN_BYTES, 0xAB);
  encode_token_bytes(SMLA_KV_FP8_PACKED, values.data(), bytes.data());
  EXPECT_EQ(bytes[kScaleOffset + 0], 127) << "all-zero tile: 2^0";
  EXPECT_EQ(bytes[kScaleOffset + 1], 120);
  for (int tile = 2; tile < 7; ++tile) EXPECT_EQ(bytes[kScaleOffset + tile], 127) << tile;
  EXPECT_EQ(bytes[kScaleOffset + 7], 0) << "padding byte";
  for (int d = 0; d < 64; ++d) EXPECT_EQ(bytes[d], 0x00) << d;
  for (int d = 64; d < 128; ++d) EXPECT_EQ(bytes[d], float_to_e4m3(256.0f)) << d;
  for (int d = 448; d < kDim; ++d) {
    const uint16_t bits =
        static_cast<uint16_t>(bytes[448 + 2 * (d - 448)] | (bytes[449 + 2 * (d - 448)] << 8));
    EXPECT_EQ(bits, float_to_bf16(values[d])) << d;
  }
}

TEST(PackedScale, ExponentClampedToUe8m0Range) {
  EXPECT_EQ(encode_tile0_amax(1e-38f, 1e-39f)[kScaleOffset], 0) << "2^-135 clamps to 2^-127";
  EXPECT_EQ(encode_tile0_amax(3.0e38f)[kScaleOffset], 127 + 120);
}

// Over random tiles of many magnitudes the largest value always lands in (224, 448].
TEST(PackedScale, AmaxLandsInTopBinade) {
  std::mt19937_64 engine(7);
  std::uniform_real_distribution<double> exponent(-30.0, 30.0);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<float> values(kDim);
    const double magnitude = std::exp2(exponent(engine));
    for (float& value : values) value = static_cast<float>(magnitude * unit(engine));
    std::vector<uint8_t> bytes(SMLA_PACKED_TOKEN_BYTES);
    encode_token_bytes(SMLA_KV_FP8_PACKED, values.data(), bytes.data());
    for (int tile = 0; tile < 7; ++tile) {
      double amax = 0;
      for (int d = 64 * tile; d < 64 * (tile + 1); ++d)
        amax = std::fmax(amax, std::fabs(values[d]));
      const double scaled = amax / ue8m0_to_double(bytes[kScaleOffset + tile]);
      EXPECT_GT(scaled, 224.0) << trial << " " << tile;
      EXPECT_LE(scaled, 448.0) << trial << " " << tile;
    }
  }
}

}  // namespace
}  // namespace smla::ref
