// The contract points of docs/design.md on the device: a row's bits do not depend on its
// batchmates, a graph captured after prepare replays correctly after the index tables and
// lengths change, capturing without prepare is SMLA_ERR_NOT_READY, and a short workspace is
// SMLA_ERR_WORKSPACE.
#include <algorithm>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "gpu_env.h"
#include "plan/decode_plan.h"
#include "reference/codecs.h"
#include "runtime/device_info.h"

namespace smla::gpu_test {
namespace {

// DSv4-Pro CSA (window 128 in pages of 256 + top-k 1024 in pages of 64), q_len 1.
smla_problem contract_problem(int heads, smla_kv_layout layout = SMLA_KV_FP8_PACKED,
                              smla_dtype q_dtype = SMLA_BF16) {
  return make_problem(heads, layout, q_dtype, 1, {{256, 128}, {64, 1024}});
}

ref::CaseSpec contract_spec(int rows, uint64_t seed, const smla_problem& problem) {
  ref::CaseSpec spec;
  spec.problem = problem;
  spec.num_rows = rows;
  spec.seed = seed;
  return spec;
}

// The arguments of rows [first, first + count) of `args`.
smla_args row_slice(const smla_problem& p, const smla_args& args, int first, int count) {
  smla_args s = args;
  const size_t q_bytes = p.q_dtype == SMLA_BF16 ? 2 : 1;
  s.num_rows = count;
  s.q = static_cast<const char*>(args.q) + first * args.q_row_stride * q_bytes;
  for (int i = 0; i < p.num_sources; ++i) {
    s.sources[i].indices = args.sources[i].indices + first * args.sources[i].index_row_stride;
    if (s.sources[i].lengths) s.sources[i].lengths = args.sources[i].lengths + first;
  }
  s.out = static_cast<uint16_t*>(args.out) + first * args.out_row_stride;
  if (s.lse) s.lse = args.lse + static_cast<size_t>(first) * p.num_heads;
  return s;
}

// The rows of `host`'s call, rerun as calls of the slices' rows: the bits must agree. The full
// call's out is left in `full_out` if given.
void expect_slices_match_full_call(const ref::HostCase& host,
                                   const std::vector<std::pair<int, int>>& slices,
                                   std::vector<uint16_t>* full_out = nullptr) {
  SCOPED_TRACE(::testing::Message()
               << host.problem.num_heads << " heads, layout " << host.problem.kv_layout
               << ", q dtype " << host.problem.q_dtype);
  GpuEnv& env = GpuEnv::get();
  const int total = host.num_rows;
  DeviceCase dc;
  ASSERT_TRUE(DeviceCase::upload(*env.session, host, {}, &dc).is_ok());
  const ref::ReferenceResult reference = ref::attention(host.problem, host.host_args());
  const CheckResult full = run_and_compare(env.ctx, *env.session, dc, reference, env.stream);
  ASSERT_TRUE(full.status.is_ok()) << full.status.message();
  ASSERT_TRUE(full.comparison.passed({})) << full.comparison.summary();
  if (full_out) *full_out = full.out;

  size_t workspace_bytes = 0;
  ASSERT_EQ(smla_prepare(env.ctx, &host.problem, total, &workspace_bytes), SMLA_OK);
  DeviceBuffer workspace;
  ASSERT_TRUE(env.session->allocate(workspace_bytes, &workspace).is_ok());
  const size_t row_elements = static_cast<size_t>(host.problem.num_heads) * SMLA_HEAD_DIM;
  for (const auto& slice : slices) {
    ASSERT_TRUE(dc.poison_outputs().is_ok());
    const smla_args args = row_slice(host.problem, dc.args(), slice.first, slice.second);
    ASSERT_EQ(smla_decode(env.ctx, &host.problem, &args, nullptr, workspace.get(), workspace_bytes,
                          env.stream),
              SMLA_OK)
        << smla_last_error();
    ASSERT_TRUE(env.session->synchronize(env.stream).is_ok());
    std::vector<uint16_t> out;
    std::vector<float> lse;
    ASSERT_TRUE(dc.download(&out, &lse).is_ok());
    const size_t begin = slice.first * row_elements;
    const size_t count = slice.second * row_elements;
    EXPECT_EQ(0, std::memcmp(out.data() + begin, full.out.data() + begin, count * 2))
        << "rows " << slice.first << ".." << slice.first + slice.second << " differ from the "
        << total << "-row call";
    if (!host.problem.want_lse) continue;
    ASSERT_EQ(lse.size(), full.lse.size());
    EXPECT_EQ(0, std::memcmp(lse.data() + slice.first * host.problem.num_heads,
                             full.lse.data() + slice.first * host.problem.num_heads,
                             slice.second * host.problem.num_heads * sizeof(float)));
  }
}

// The slices of a random case of `total` rows of `problem` (expect_slices_match_full_call). The
// slices are chosen to run every kernel of the problem: the narrow splits (fewer heads per CTA),
// the default tile's split and prefix items and, for the full call, whole rows.
void expect_batch_invariance(const smla_problem& problem, int total, uint64_t seed,
                             const std::vector<std::pair<int, int>>& slices) {
  const ref::CaseSpec spec = contract_spec(total, seed, problem);
  if (prewarmed(spec.problem)) return;
  expect_slices_match_full_call(ref::make_random_case(spec), slices);
}

TEST(DecodeContract, RowResultsDoNotDependOnTheBatch) {
  SMLA_REQUIRE_GPU();
  // 16 heads: 1-7 rows split over 8-head CTAs, up to 96 over 16-head CTAs; prefix items of 4
  // segments at 97-104 rows, of 5 at 133, 6 at 134-164, 7 at 165-180; 250 rows run whole.
  expect_batch_invariance(contract_problem(16), 250, 900,
                          {{0, 1},
                           {57, 1},
                           {249, 1},
                           {10, 7},
                           {100, 40},
                           {3, 48},
                           {0, 100},
                           {20, 133},
                           {50, 160},
                           {60, 170}});
  // 32 heads (64-entry tiles): 1-7 rows over 16-head CTAs, up to 14 over 32, then prefix items
  // (2 segments at 15-26 rows, 3 at 27-34, ..., 6 at 57-64); 100 rows run whole.
  const std::vector<std::pair<int, int>> slices32 = {{0, 1},   {5, 3},   {10, 5},  {40, 10},
                                                     {20, 20}, {70, 30}, {30, 60}, {0, 62}};
  expect_batch_invariance(contract_problem(32), 100, 901, slices32);
  // 128 heads: on sm_90a the wgmma kernel, rows split up to 11, prefix items of 2 segments at
  // 12-20 rows, of 3 at 21-26 (the uniform layout with fp8 q, below, alike but to 25), and the
  // 48-row call whole, folding 6 segments; elsewhere 1 row over 16-head CTAs, then 32-head
  // CTAs, split and in prefix items.
  const std::vector<std::pair<int, int>> slices128 = {{0, 1},   {47, 1},  {3, 5},
                                                      {10, 20}, {20, 24}, {0, 22}};
  expect_batch_invariance(contract_problem(128), 48, 902, slices128);
  // The other layouts and fp8 q take the same paths: 32 heads on the uniform layout with fp8 q,
  // and 16 heads on the bf16 layout (100 rows in prefix items, 250 whole).
  expect_batch_invariance(contract_problem(32, SMLA_KV_FP8_UNIFORM, SMLA_FP8_E4M3), 100, 903,
                          slices32);
  expect_batch_invariance(contract_problem(16, SMLA_KV_BF16), 250, 904,
                          {{0, 1}, {10, 7}, {50, 40}, {100, 100}});
  // 128 heads on the uniform layout with fp8 q and no lse: on sm_90a the wgmma kernel's e4m3
  // scores.
  expect_batch_invariance(make_problem(128, SMLA_KV_FP8_UNIFORM, SMLA_FP8_E4M3, 1,
                                       {{256, 128}, {64, 1024}}, true, false),
                          48, 905, slices128);
}

// Sets every dim of the bf16-layout token at `index` of `source` to `rest`, but dim 0 to `dim0`.
void set_bf16_token(ref::HostSource& source, int page_size, int32_t index, uint16_t dim0,
                    uint16_t rest) {
  uint16_t token[SMLA_HEAD_DIM];
  std::fill(token, token + SMLA_HEAD_DIM, rest);
  token[0] = dim0;
  const int64_t at = index / page_size * source.page_stride_bytes +
                     int64_t{index % page_size} * SMLA_BF16_TOKEN_BYTES;
  std::memcpy(source.cache.data() + at, token, sizeof token);
}

// Sets the tokens that row r's valid columns c < lengths[r] of source s select.
template <typename SetToken>
void set_selected_tokens(ref::HostCase& host, int s, SetToken set) {
  ref::HostSource& source = host.sources[s];
  const int page_size = host.problem.sources[s].page_size;
  for (int r = 0; r < host.num_rows; ++r) {
    for (int c = 0; c < source.lengths[r]; ++c) {
      const int32_t index = source.indices[r * source.index_row_stride + c];
      if (index >= 0 && index < source.num_pages * page_size) set(source, page_size, index);
    }
  }
}

// A prefix item whose folded total is exactly -0 must reach the output as whole rows carry it
// (the combine kernel takes the item's total over instead of folding it into an empty total).
// Window entries (each row's first segment): score 0 and a tiny negative dim 0. The first 128
// top-k entries (the second segment): dim 0 = +0 and a score 122 log2 units higher, so the fold
// scales the window's sum (>= -2^-33) by 2^-122, below the smallest float: -0. The rows' top-k
// lengths end there, so nothing folds onto the -0 after it.
TEST(DecodeContract, PrefixItemsKeepANegativeZeroTotal) {
  SMLA_REQUIRE_GPU();
  const smla_problem problem = contract_problem(16, SMLA_KV_BF16);
  if (prewarmed(problem)) return;
  ref::HostCase host = ref::make_random_case(contract_spec(250, 906, problem));
  const uint16_t q_value = ref::float_to_bf16(8.0f);
  for (size_t i = 0; i < host.q.size() / 2; ++i) {
    const uint16_t value = i % SMLA_HEAD_DIM == 0 ? 0 : q_value;
    std::memcpy(host.q.data() + 2 * i, &value, 2);
  }
  set_selected_tokens(host, 0, [](ref::HostSource& source, int page_size, int32_t index) {
    set_bf16_token(source, page_size, index, ref::float_to_bf16(-0x1p-40f), 0);
  });
  std::fill(host.sources[1].lengths.begin(), host.sources[1].lengths.end(), 128);
  // 8 * 511 * 0.46875 * softmax_scale = 84.7 nats = 122.2 log2 units.
  set_selected_tokens(host, 1, [](ref::HostSource& source, int page_size, int32_t index) {
    set_bf16_token(source, page_size, index, 0, ref::float_to_bf16(0.46875f));
  });
  // 100 rows run prefix items of 4 segments, the 250 whole rows.
  DeviceInfo device;
  ASSERT_TRUE(GpuEnv::get().session->info(&device).is_ok());
  std::unique_ptr<DecodePlan> plan;
  ASSERT_TRUE(DecodePlan::build(*device.arch, problem, PlanSettings{}, {}, &plan).is_ok());
  ASSERT_EQ(plan->call(100, SIZE_MAX).launch.prefix_segments, 4);
  ASSERT_FALSE(plan->call(250, SIZE_MAX).launch.split);
  std::vector<uint16_t> full_out;
  expect_slices_match_full_call(host, {{0, 100}, {100, 100}}, &full_out);
  if (HasFatalFailure()) return;
  int negative_zeros = 0;
  for (size_t i = 0; i < full_out.size(); i += SMLA_HEAD_DIM)
    negative_zeros += full_out[i] == 0x8000;
  EXPECT_GT(negative_zeros, 0) << "no row's dim 0 is -0: the case misses the edge it tests";
}

// Row r takes row r+1's lists with a shorter random length: only entries the original case
// selected (the rest of the caches hold NaN).
ref::HostCase rotate_rows(const ref::HostCase& host, uint64_t seed) {
  ref::HostCase changed = host;
  std::mt19937_64 rng(seed);
  for (int s = 0; s < host.problem.num_sources; ++s) {
    const ref::HostSource& src = host.sources[s];
    ref::HostSource& dst = changed.sources[s];
    for (int r = 0; r < host.num_rows; ++r) {
      const int from = (r + 1) % host.num_rows;
      std::copy_n(src.indices.begin() + from * src.index_row_stride, src.index_row_stride,
                  dst.indices.begin() + r * src.index_row_stride);
      dst.lengths[r] = static_cast<int32_t>(rng() % (src.lengths[from] + 1));
    }
  }
  return changed;
}

TEST(DecodeContract, CapturedGraphReplaysAfterTablesChange) {
  SMLA_REQUIRE_GPU();
  GpuEnv& env = GpuEnv::get();
  for (int rows : {8, 100}) {
    const ref::CaseSpec spec = contract_spec(rows, 910 + rows, contract_problem(16));
    if (prewarmed(spec.problem)) return;
    const ref::HostCase host = ref::make_random_case(spec);
    DeviceCase dc;
    ASSERT_TRUE(DeviceCase::upload(*env.session, host, {}, &dc).is_ok());
    size_t workspace_bytes = 0;
    ASSERT_EQ(smla_prepare(env.ctx, &host.problem, rows, &workspace_bytes), SMLA_OK);
    DeviceBuffer workspace;
    ASSERT_TRUE(env.session->allocate(workspace_bytes, &workspace).is_ok());

    const CudaDriver& d = env.session->driver();
    ASSERT_EQ(d.cuStreamBeginCapture(env.stream, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    const smla_status captured = smla_decode(env.ctx, &host.problem, &dc.args(), nullptr,
                                             workspace.get(), workspace_bytes, env.stream);
    CUgraph graph = nullptr;
    ASSERT_EQ(d.cuStreamEndCapture(env.stream, &graph), CUDA_SUCCESS);
    ASSERT_EQ(captured, SMLA_OK) << smla_last_error();
    CUgraphExec exec = nullptr;
    ASSERT_EQ(d.cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);

    const ref::HostCase changed = rotate_rows(host, 5);
    for (const ref::HostCase* version : {&host, &changed}) {
      for (int s = 0; s < host.problem.num_sources; ++s) {
        ASSERT_TRUE(dc.upload_indices(s, version->sources[s].indices).is_ok());
        ASSERT_TRUE(dc.upload_lengths(s, version->sources[s].lengths).is_ok());
      }
      ASSERT_TRUE(dc.poison_outputs().is_ok());
      ASSERT_EQ(d.cuGraphLaunch(exec, env.stream), CUDA_SUCCESS);
      ASSERT_TRUE(env.session->synchronize(env.stream).is_ok());
      std::vector<uint16_t> out;
      std::vector<float> lse;
      ASSERT_TRUE(dc.download(&out, &lse).is_ok());
      const ref::ReferenceResult reference = ref::attention(version->problem, version->host_args());
      const ref::Comparison c =
          ref::compare(version->problem, rows, reference, out.data(), dc.args().out_row_stride,
                       dc.args().out_head_stride, lse.data());
      EXPECT_TRUE(c.passed({})) << "rows " << rows
                                << (version == &host ? " as captured: " : " after the change: ")
                                << c.summary();
    }
    d.cuGraphExecDestroy(exec);
    d.cuGraphDestroy(graph);
  }
}

TEST(DecodeContract, CapturingWithoutPrepareIsNotReady) {
  SMLA_REQUIRE_GPU();
  GpuEnv& env = GpuEnv::get();
  const ref::CaseSpec spec = contract_spec(4, 920, contract_problem(16));
  if (prewarmed(spec.problem)) return;
  const ref::HostCase host = ref::make_random_case(spec);
  DeviceCase dc;
  ASSERT_TRUE(DeviceCase::upload(*env.session, host, {}, &dc).is_ok());
  smla_context* fresh = nullptr;
  ASSERT_EQ(smla_context_create(nullptr, &fresh), SMLA_OK);
  const CudaDriver& d = env.session->driver();
  ASSERT_EQ(d.cuStreamBeginCapture(env.stream, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  const smla_status rc =
      smla_decode(fresh, &host.problem, &dc.args(), nullptr, nullptr, 0, env.stream);
  const std::string message = smla_last_error();
  CUgraph graph = nullptr;
  EXPECT_EQ(d.cuStreamEndCapture(env.stream, &graph), CUDA_SUCCESS);
  if (graph) d.cuGraphDestroy(graph);
  EXPECT_EQ(rc, SMLA_ERR_NOT_READY) << message;
  EXPECT_NE(message.find("smla_prepare"), std::string::npos) << message;
  smla_context_destroy(fresh);
}

TEST(DecodeContract, ShortWorkspaceIsRejected) {
  SMLA_REQUIRE_GPU();
  GpuEnv& env = GpuEnv::get();
  const ref::CaseSpec spec = contract_spec(2, 930, contract_problem(16));
  if (prewarmed(spec.problem)) return;
  const ref::HostCase host = ref::make_random_case(spec);
  DeviceCase dc;
  ASSERT_TRUE(DeviceCase::upload(*env.session, host, {}, &dc).is_ok());
  size_t workspace_bytes = 0;
  ASSERT_EQ(smla_prepare(env.ctx, &host.problem, 2, &workspace_bytes), SMLA_OK);
  ASSERT_GT(workspace_bytes, 16u);
  DeviceBuffer workspace;
  ASSERT_TRUE(env.session->allocate(workspace_bytes, &workspace).is_ok());
  EXPECT_EQ(smla_decode(env.ctx, &host.problem, &dc.args(), nullptr, workspace.get(),
                        workspace_bytes - 16, env.stream),
            SMLA_ERR_WORKSPACE);
  EXPECT_NE(std::string(smla_last_error()).find("workspace"), std::string::npos);
}

}  // namespace
}  // namespace smla::gpu_test
