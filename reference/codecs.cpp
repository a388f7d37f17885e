#include "reference/codecs.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace smla::ref {
namespace {

constexpr int kNopeDims = 448;
constexpr int kRopeDims = 64;
constexpr int kTileDims = 64;
constexpr int kNopeTiles = kNopeDims / kTileDims;
constexpr double kE4m3Max = 448.0;
constexpr int kUe8m0Bias = 127;

constexpr double pow2(int exponent) {
  double value = 1.0;
  for (; exponent > 0; --exponent) value *= 2.0;
  for (; exponent < 0; ++exponent) value /= 2.0;
  return value;
}

constexpr float e4m3_value(uint8_t bits) {
  const int exponent = (bits >> 3) & 0xF;
  const int mantissa = bits & 0x7;
  if (exponent == 0xF && mantissa == 0x7) return std::numeric_limits<float>::quiet_NaN();
  const double magnitude =
      exponent == 0 ? mantissa * pow2(-9) : (8 + mantissa) * pow2(exponent - 10);
  return static_cast<float>((bits & 0x80) ? -magnitude : magnitude);
}

constexpr std::array<float, 256> make_e4m3_table() {
  std::array<float, 256> table{};
  for (int bits = 0; bits < 256; ++bits) table[bits] = e4m3_value(static_cast<uint8_t>(bits));
  return table;
}

// Decoding is on the reference's hot path (every valid entry of every row), hence a table.
constexpr std::array<float, 256> kE4m3Table = make_e4m3_table();

// Round half to even without depending on the floating-point environment's rounding mode.
double round_half_even(double x) {
  const double floor = std::floor(x);
  const double fraction = x - floor;
  if (fraction > 0.5 || (fraction == 0.5 && std::fmod(floor, 2.0) != 0.0)) return floor + 1.0;
  return floor;
}

// Takes a double so that callers can pass value / scale without an intermediate float rounding.
uint8_t double_to_e4m3(double value) {
  if (std::isnan(value)) return 0x7F;
  const uint8_t sign = std::signbit(value) ? 0x80 : 0x00;
  const double magnitude = std::fabs(value);
  if (magnitude >= kE4m3Max) return sign | 0x7E;
  // Quantum of the binade holding `magnitude`; every value below 2^-6 shares the subnormal one.
  int frexp_exponent = 0;
  std::frexp(magnitude, &frexp_exponent);
  const int binade = std::max(frexp_exponent - 1, -6);
  const double steps = round_half_even(std::ldexp(magnitude, 3 - binade));
  const double rounded = std::ldexp(steps, binade - 3);  // may carry into the next binade
  if (rounded == 0.0) return 0x00;  // no -0, as shared/vectors/codec.json encodes it
  std::frexp(rounded, &frexp_exponent);
  const int rounded_binade = frexp_exponent - 1;
  if (rounded_binade < -6) return sign | static_cast<uint8_t>(std::ldexp(rounded, 9));
  const int mantissa = static_cast<int>(std::ldexp(rounded, 3 - rounded_binade)) - 8;
  return sign | static_cast<uint8_t>(((rounded_binade + 7) << 3) | mantissa);
}

// Smallest k with amax <= 448 * 2^k, i.e. ceil(log2(amax / 448)), found with exact comparisons
// so that a tile whose amax is exactly 448 * 2^k never lands one binade off.
int tile_scale_exponent(double amax) {
  if (amax == 0.0) return 0;
  if (!(amax <= std::ldexp(kE4m3Max, kUe8m0Bias))) return kUe8m0Bias;
  int k = static_cast<int>(std::ceil(std::log2(amax / kE4m3Max)));
  while (std::ldexp(kE4m3Max, k) < amax) ++k;
  while (std::ldexp(kE4m3Max, k - 1) >= amax) --k;
  return std::max(k, -kUe8m0Bias);
}

void store_bf16(uint8_t* bytes, float value) {
  const uint16_t bits = float_to_bf16(value);
  bytes[0] = static_cast<uint8_t>(bits & 0xFF);
  bytes[1] = static_cast<uint8_t>(bits >> 8);
}

double load_bf16(const uint8_t* bytes) {
  return bf16_to_float(static_cast<uint16_t>(bytes[0] | (bytes[1] << 8)));
}

}  // namespace

int64_t token_bytes(smla_kv_layout layout) {
  switch (layout) {
    case SMLA_KV_FP8_UNIFORM:
      return SMLA_UNIFORM_TOKEN_BYTES;
    case SMLA_KV_FP8_PACKED:
      return SMLA_PACKED_TOKEN_BYTES;
    case SMLA_KV_BF16:
      return SMLA_BF16_TOKEN_BYTES;
  }
  return 0;
}

float e4m3_to_float(uint8_t bits) { return kE4m3Table[bits]; }

uint8_t float_to_e4m3(float value) { return double_to_e4m3(value); }

float bf16_to_float(uint16_t bits) {
  const uint32_t widened = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &widened, sizeof(value));
  return value;
}

uint16_t float_to_bf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  const uint32_t rounding_bias = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding_bias) >> 16);
}

double ue8m0_to_double(uint8_t bits) {
  if (bits == 0xFF) return std::numeric_limits<double>::quiet_NaN();
  return std::ldexp(1.0, bits - kUe8m0Bias);
}

TokenLocation token_location(smla_kv_layout layout, int page_size, int64_t page_stride_bytes,
                             int64_t token) {
  const int64_t page_start = token / page_size * page_stride_bytes;
  const int64_t slot = token % page_size;
  switch (layout) {
    case SMLA_KV_FP8_PACKED:
      return {page_start + slot * SMLA_PACKED_DATA_BYTES,
              page_start + int64_t{page_size} * SMLA_PACKED_DATA_BYTES +
                  slot * (SMLA_PACKED_TOKEN_BYTES - SMLA_PACKED_DATA_BYTES)};
    case SMLA_KV_FP8_UNIFORM:
    case SMLA_KV_BF16:
      return {page_start + slot * token_bytes(layout), -1};
  }
  return {-1, -1};
}

void encode_token(smla_kv_layout layout, int page_size, int64_t page_stride_bytes, uint8_t* cache,
                  int64_t token, const float* values) {
  const TokenLocation location = token_location(layout, page_size, page_stride_bytes, token);
  uint8_t* data = cache + location.data_offset;
  switch (layout) {
    case SMLA_KV_FP8_PACKED: {
      uint8_t* scales = cache + location.scale_offset;
      for (int tile = 0; tile < kNopeTiles; ++tile) {
        const float* tile_values = values + tile * kTileDims;
        double amax = 0.0;
        for (int d = 0; d < kTileDims; ++d)
          amax = std::max(amax, std::fabs(double{tile_values[d]}));
        const int exponent = tile_scale_exponent(amax);
        scales[tile] = static_cast<uint8_t>(exponent + kUe8m0Bias);
        for (int d = 0; d < kTileDims; ++d) {
          data[tile * kTileDims + d] =
              double_to_e4m3(std::ldexp(double{tile_values[d]}, -exponent));
        }
      }
      scales[kNopeTiles] = 0;
      for (int d = 0; d < kRopeDims; ++d)
        store_bf16(data + kNopeDims + 2 * d, values[kNopeDims + d]);
      return;
    }
    case SMLA_KV_FP8_UNIFORM:
      for (int d = 0; d < SMLA_HEAD_DIM; ++d) data[d] = float_to_e4m3(values[d]);
      return;
    case SMLA_KV_BF16:
      for (int d = 0; d < SMLA_HEAD_DIM; ++d) store_bf16(data + 2 * d, values[d]);
      return;
  }
}

void decode_token(smla_kv_layout layout, int page_size, int64_t page_stride_bytes,
                  const uint8_t* cache, int64_t token, float kv_scale, double* values) {
  const TokenLocation location = token_location(layout, page_size, page_stride_bytes, token);
  const uint8_t* data = cache + location.data_offset;
  switch (layout) {
    case SMLA_KV_FP8_PACKED: {
      const uint8_t* scales = cache + location.scale_offset;
      for (int tile = 0; tile < kNopeTiles; ++tile) {
        const double scale = ue8m0_to_double(scales[tile]);
        for (int d = tile * kTileDims; d < (tile + 1) * kTileDims; ++d) {
          values[d] = kE4m3Table[data[d]] * scale;
        }
      }
      for (int d = 0; d < kRopeDims; ++d)
        values[kNopeDims + d] = load_bf16(data + kNopeDims + 2 * d);
      return;
    }
    case SMLA_KV_FP8_UNIFORM:
      for (int d = 0; d < SMLA_HEAD_DIM; ++d) values[d] = kE4m3Table[data[d]] * double{kv_scale};
      return;
    case SMLA_KV_BF16:
      for (int d = 0; d < SMLA_HEAD_DIM; ++d) values[d] = load_bf16(data + 2 * d);
      return;
  }
}

void encode_token_bytes(smla_kv_layout layout, const float* values, uint8_t* bytes) {
  // The standalone string is a one-token page with no padding: data first, then the scales.
  encode_token(layout, 1, token_bytes(layout), bytes, 0, values);
}

}  // namespace smla::ref
