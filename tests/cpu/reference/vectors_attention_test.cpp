// The reference reproduces every case of shared/vectors/attention.json.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/attention.h"
#include "shared_vectors.h"

namespace smla::ref::testing {
namespace {

using nlohmann::json;

constexpr double kOutRelL2 = 1e-6;
constexpr double kLseAbs = 1e-9;

// The lse the vectors hold differs from the reference's by two roundings, both far above
// kLseAbs: the vectors store lse in fp32 (half an ulp), and smla_args passes softmax_scale as
// float, which scales every score by (1 + e) with e = float(scale) / scale - 1 and so moves lse by
// e * E_p[score]. |E_p[score]| <= |lse| + ln(entries), since lse - ln(entries) <= E_p[score] <=
// lse.
double lse_tolerance(double expected, double softmax_scale, int64_t entries) {
  const double scale_error =
      std::fabs(static_cast<float>(softmax_scale) - softmax_scale) / softmax_scale;
  const float rounded = static_cast<float>(expected);
  const double half_ulp = 0.5 * (std::nextafter(rounded, INFINITY) - rounded);
  return kLseAbs + half_ulp +
         scale_error * (std::fabs(expected) + std::log(static_cast<double>(entries)));
}

smla_kv_layout layout_named(const std::string& name) {
  if (name == "fp8_uniform") return SMLA_KV_FP8_UNIFORM;
  if (name == "fp8_packed") return SMLA_KV_FP8_PACKED;
  EXPECT_EQ(name, "bf16");
  return SMLA_KV_BF16;
}

// One vectors case as a call: host buffers and the problem and arguments pointing into them.
struct VectorCall {
  smla_problem problem{};
  smla_args args{};
  std::vector<uint8_t> q;
  std::vector<uint8_t> caches[SMLA_MAX_SOURCES];
  std::vector<int32_t> indices[SMLA_MAX_SOURCES];
  std::vector<int32_t> lengths[SMLA_MAX_SOURCES];
  std::vector<float> sink;
};

void load_call(const json& c, VectorCall& call) {
  const int rows = c["rows"];
  const int heads = c["heads"];
  call.problem.num_heads = heads;
  call.problem.q_dtype = c["q_dtype"] == "fp8_e4m3" ? SMLA_FP8_E4M3 : SMLA_BF16;
  call.problem.kv_layout = layout_named(c["layout"]);
  call.problem.q_len = 1;
  call.problem.num_sources = static_cast<int>(c["sources"].size());
  call.problem.has_sink = c["sink"].is_null() ? 0 : 1;
  call.problem.want_lse = 1;
  call.q = hex_bytes(c["q_hex"]);
  call.args.num_rows = rows;
  call.args.q = call.q.data();
  call.args.q_head_stride = SMLA_HEAD_DIM;
  call.args.q_row_stride = int64_t{heads} * SMLA_HEAD_DIM;
  // smla_args carries the scales as float, as the kernels get them.
  call.args.q_scale = static_cast<float>(number(c["q_scale"]));
  call.args.kv_scale = static_cast<float>(number(c["kv_scale"]));
  call.args.softmax_scale = static_cast<float>(number(c["softmax_scale"]));
  for (int s = 0; s < call.problem.num_sources; ++s) {
    const json& source = c["sources"][s];
    const int width = source["width"];
    call.problem.sources[s] = {SMLA_SOURCE_LIST, source["page_size"].get<int>(), width, 0};
    call.caches[s] = hex_bytes(source["cache_hex"]);
    for (const json& row : source["indices"]) {
      for (const json& index : row) call.indices[s].push_back(index.get<int32_t>());
    }
    if (!source["lengths"].is_null()) {
      for (const json& length : source["lengths"]) call.lengths[s].push_back(length.get<int32_t>());
    }
    smla_source_args& args = call.args.sources[s];
    args.cache = call.caches[s].data();
    args.page_stride_bytes = source["page_stride_bytes"];
    args.num_pages = source["num_pages"];
    args.indices = call.indices[s].data();
    args.index_row_stride = width;
    args.lengths = call.lengths[s].empty() ? nullptr : call.lengths[s].data();
  }
  if (call.problem.has_sink) {
    for (const json& value : c["sink"]) call.sink.push_back(static_cast<float>(number(value)));
    call.args.sink = call.sink.data();
  }
}

void check_case(const json& c) {
  SCOPED_TRACE(c["name"].get<std::string>());
  VectorCall call;
  load_call(c, call);
  const ReferenceResult result = attention(call.problem, call.args);

  const json& expected_out = c["expected_out"];
  ASSERT_EQ(result.out.size(), expected_out.size());
  double error_sq = 0, norm_sq = 0;
  int64_t zeros_missed = 0;
  for (size_t i = 0; i < result.out.size(); ++i) {
    const double expected = number(expected_out[i]);
    error_sq += (result.out[i] - expected) * (result.out[i] - expected);
    norm_sq += expected * expected;
    if (expected == 0.0 && result.out[i] != 0.0) ++zeros_missed;
  }
  EXPECT_LE(std::sqrt(error_sq / norm_sq), kOutRelL2);
  EXPECT_EQ(zeros_missed, 0) << "elements expected exactly 0 that are not";

  int64_t entries_per_row = 0;
  for (const json& source : c["sources"]) entries_per_row += source["width"].get<int64_t>();
  const double softmax_scale = number(c["softmax_scale"]);
  const json& expected_lse = c["expected_lse"];
  ASSERT_EQ(result.lse.size(), expected_lse.size());
  for (size_t i = 0; i < result.lse.size(); ++i) {
    const double expected = number(expected_lse[i]);
    if (std::isinf(expected)) {
      EXPECT_EQ(result.lse[i], expected) << "lse " << i;
    } else {
      EXPECT_NEAR(result.lse[i], expected, lse_tolerance(expected, softmax_scale, entries_per_row))
          << "lse " << i;
    }
  }
}

TEST(VectorsAttention, EveryCaseReproduced) {
  const json& vectors = load_vectors("attention.json");
  ASSERT_TRUE(vectors.contains("cases"));
  ASSERT_FALSE(vectors["cases"].empty());
  for (const json& c : vectors["cases"]) check_case(c);
}

}  // namespace
}  // namespace smla::ref::testing
