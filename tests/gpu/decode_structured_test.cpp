// Window and prefix sources on the device, through smla_decode and smla_prefill, against the
// reference's reading of the varlen rule (ref::varlen_attention): DSv4 HCA (window 128 in pages
// of 256 + a ratio-128 prefix in pages of 2) and CSA (window + a top-k list in pages of 64),
// requests with and without cached prefixes, invalid block-table entries, NaN in every slot no
// row reads, and a request's bits independent of the requests beside it.
#include <string>
#include <vector>

#include "gpu_env.h"
#include "reference/structured_sources.h"

namespace smla::gpu_test {
namespace {

// HCA: a 128-token window and `prefix_width` compressed entries of 128 tokens.
smla_problem hca_problem(int heads, smla_kv_layout layout, int prefix_width = 64) {
  return with_structured_sources(
      make_problem(heads, layout, SMLA_BF16, 1, {{256, 128}, {2, prefix_width}}), 128);
}

// CSA: the window beside a top-k list of `top_k` (per-row lengths).
smla_problem csa_problem(int heads, int top_k) {
  return with_structured_sources(
      make_problem(heads, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, top_k}}), 0);
}

std::string label(const char* what, const ref::CaseSpec& spec) {
  std::string text = what;
  for (size_t b = 0; b < spec.request_rows.size(); ++b) {
    text +=
        " " + std::to_string(spec.request_rows[b]) + "@" + std::to_string(spec.cached_tokens[b]);
  }
  return text;
}

TEST(DecodeStructured, HcaPrefillChunks) {
  SMLA_REQUIRE_GPU();
  uint64_t seed = 7100;
  for (const int heads : {8, 16, 32, 64, 128}) {
    // One request: a chunk over a cached prefix; three: prompt lengths 1, 127 and 129, the
    // second over a prefix.
    for (const auto& [rows, cached] : std::vector<std::pair<std::vector<int>, std::vector<int>>>{
             {{129}, {5000}}, {{1, 127, 129}, {0, 5000, 0}}}) {
      const ref::CaseSpec spec =
          requests_spec(hca_problem(heads, SMLA_KV_FP8_PACKED), rows, cached, seed++);
      check_case(spec, label("HCA prefill", spec).c_str(), {}, nullptr, CallEntry::kPrefill);
    }
  }
}

TEST(DecodeStructured, HcaLayouts) {
  SMLA_REQUIRE_GPU();
  uint64_t seed = 7200;
  for (const smla_kv_layout layout : {SMLA_KV_FP8_UNIFORM, SMLA_KV_BF16}) {
    for (const int heads : {16, 64}) {
      const ref::CaseSpec spec =
          requests_spec(hca_problem(heads, layout), {128, 3}, {300, 4000}, seed++);
      check_case(spec, label("HCA layouts", spec).c_str(), {}, nullptr, CallEntry::kPrefill);
    }
  }
}

TEST(DecodeStructured, CsaWindowBesideTopK) {
  SMLA_REQUIRE_GPU();
  uint64_t seed = 7300;
  for (const int heads : {16, 128}) {
    for (const int top_k : {512, 1024}) {
      const ref::CaseSpec spec =
          requests_spec(csa_problem(heads, top_k), {127, 2}, {5000, 0}, seed++);
      check_case(spec, label("CSA prefill", spec).c_str(), {}, nullptr, CallEntry::kPrefill);
    }
  }
}

TEST(DecodeStructured, DecodeStepsOfManyRequests) {
  SMLA_REQUIRE_GPU();
  // One new row per request, as a decode step, at lengths from empty prefixes to past the
  // prefix's width (validation caps the host lengths: 64 entries of 128 tokens).
  uint64_t seed = 7400;
  for (const int heads : {16, 128}) {
    const ref::CaseSpec spec = requests_spec(hca_problem(heads, SMLA_KV_FP8_PACKED),
                                             {1, 1, 1, 1, 1}, {0, 126, 127, 5000, 8190}, seed++);
    check_case(spec, label("HCA decode", spec).c_str());
  }
}

TEST(DecodeStructured, RowsDoNotDependOnOtherRequests) {
  SMLA_REQUIRE_GPU();
  GpuEnv& env = GpuEnv::get();
  const smla_problem problem = hca_problem(16, SMLA_KV_FP8_PACKED);
  const ref::CaseSpec spec = requests_spec(problem, {40, 3, 129}, {5000, 0, 200}, 7500);
  if (prewarmed(problem)) return;
  const ref::HostCase all = ref::make_random_case(spec);
  // The last request alone: its rows, its table row, its varlen entries.
  ref::HostCase last = all;
  const int first_row = all.cu_seqlens_q[2];
  const size_t q_bytes = 2 * size_t{SMLA_HEAD_DIM} * problem.num_heads;
  last.num_rows = all.num_rows - first_row;
  last.q.erase(last.q.begin(), last.q.begin() + first_row * q_bytes);
  for (int s = 0; s < problem.num_sources; ++s) {
    std::vector<int32_t>& table = last.sources[s].indices;
    table.erase(table.begin(), table.begin() + 2 * last.sources[s].index_row_stride);
  }
  last.cu_seqlens_q = {0, last.num_rows};
  last.kv_lens = {all.kv_lens[2]};

  std::vector<std::vector<uint16_t>> outs;
  const ref::HostCase* const hosts[] = {&all, &last};
  for (const ref::HostCase* host : hosts) {
    DeviceCase dc;
    ASSERT_TRUE(DeviceCase::upload(*env.session, *host, {}, &dc).is_ok());
    const smla_varlen varlen = host->host_varlen();
    const CheckResult result = run_and_compare(
        env.ctx, *env.session, dc, ref::varlen_attention(host->problem, host->host_args(), &varlen),
        env.stream);
    ASSERT_TRUE(result.status.is_ok()) << result.status.message();
    EXPECT_TRUE(result.comparison.passed({})) << result.comparison.summary();
    outs.push_back(result.out);
  }
  const size_t row_elements = size_t{SMLA_HEAD_DIM} * problem.num_heads;
  const std::vector<uint16_t> tail(outs[0].begin() + first_row * row_elements, outs[0].end());
  EXPECT_EQ(tail, outs[1]) << "the last request's rows changed with the requests beside it";
}

}  // namespace
}  // namespace smla::gpu_test
