// encode_token_bytes reproduces every token of shared/vectors/codec.json byte for byte, and
// decode_token inverts it: the decoded values are the input rounded as the layout rounds it.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/codecs.h"
#include "shared_vectors.h"

namespace smla::ref::testing {
namespace {

using nlohmann::json;

constexpr int kDim = SMLA_HEAD_DIM;

std::string hex_of(const std::vector<uint8_t>& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t byte : bytes) {
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 0xF];
  }
  return hex;
}

// The first differing byte, so a failure says where instead of printing two 2 KiB strings.
void expect_same_bytes(const std::vector<uint8_t>& got, const std::string& expected_hex) {
  const std::vector<uint8_t> expected = hex_bytes(expected_hex);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != expected[i]) {
      ADD_FAILURE() << "byte " << i << " is " << int{got[i]} << ", expected " << int{expected[i]}
                    << " (got " << hex_of(got) << ")";
      return;
    }
  }
}

void check_layout(smla_kv_layout layout, int64_t token_bytes, const std::vector<float>& input,
                  const std::string& expected_hex) {
  std::vector<uint8_t> bytes(token_bytes, 0xAB);
  encode_token_bytes(layout, input.data(), bytes.data());
  expect_same_bytes(bytes, expected_hex);

  // The standalone bytes are a one-token page: decode them there.
  double decoded[kDim];
  decode_token(layout, 1, token_bytes, bytes.data(), 0, 1.0f, decoded);
  const std::vector<uint8_t> expected = hex_bytes(expected_hex);
  for (int d = 0; d < kDim; ++d) {
    double rounded;
    if (layout == SMLA_KV_FP8_UNIFORM) {
      rounded = e4m3_to_float(float_to_e4m3(input[d]));
    } else if (layout == SMLA_KV_BF16 || d >= 448) {
      rounded = bf16_to_float(float_to_bf16(input[d]));
    } else {
      const double scale = ue8m0_to_double(expected[576 + d / 64]);
      rounded = e4m3_to_float(float_to_e4m3(static_cast<float>(input[d] / scale))) * scale;
    }
    if (decoded[d] != rounded) {
      ADD_FAILURE() << "dim " << d << " decodes to " << decoded[d] << ", expected " << rounded;
      return;
    }
  }
}

TEST(VectorsCodec, EveryTokenByteForByte) {
  const json& vectors = load_vectors("codec.json");
  ASSERT_TRUE(vectors.contains("cases"));
  ASSERT_FALSE(vectors["cases"].empty());
  for (const json& c : vectors["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    std::vector<float> input;
    for (const json& value : c["input"]) input.push_back(static_cast<float>(number(value)));
    ASSERT_EQ(input.size(), static_cast<size_t>(kDim));
    {
      SCOPED_TRACE("packed");
      check_layout(SMLA_KV_FP8_PACKED, SMLA_PACKED_TOKEN_BYTES, input, c["packed_token_hex"]);
    }
    {
      SCOPED_TRACE("uniform");
      check_layout(SMLA_KV_FP8_UNIFORM, SMLA_UNIFORM_TOKEN_BYTES, input, c["uniform_token_hex"]);
    }
    {
      SCOPED_TRACE("bf16");
      check_layout(SMLA_KV_BF16, SMLA_BF16_TOKEN_BYTES, input, c["bf16_token_hex"]);
    }
  }
}

}  // namespace
}  // namespace smla::ref::testing
