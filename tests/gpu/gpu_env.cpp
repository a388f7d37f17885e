#include "gpu_env.h"

#include <fmt/format.h>

#include <cstdlib>
#include <utility>

#include "deployments/deployment.h"
#include "reference/structured_sources.h"

namespace smla::gpu_test {

namespace {

// The options of every test context: the defaults, for `prewarm_arch` in prewarm mode.
smla_options context_options(const std::string& prewarm_arch) {
  smla_options options;
  smla_options_init(&options);
  if (!prewarm_arch.empty()) options.arch = prewarm_arch.c_str();
  return options;
}

}  // namespace

GpuEnv& GpuEnv::get() {
  static GpuEnv* env = [] {
    auto* e = new GpuEnv();
    const char* arch = std::getenv("SMLA_PREWARM_ARCH");
    Status status = DeviceSession::open(0, &e->session);
    if (!status) {
      e->session.reset();
      e->skip_reason = "no GPU: " + status.message();
      if (arch == nullptr) return e;
      e->prewarm_arch = arch;
    }
    const smla_options options = context_options(e->prewarm_arch);
    if (smla_context_create(&options, &e->ctx) != SMLA_OK) {
      e->ctx = nullptr;
      e->session.reset();
      e->prewarm_arch.clear();
      e->skip_reason = std::string("smla_context_create failed: ") + smla_last_error();
      return e;
    }
    if (e->session && !e->session->create_stream(&e->stream)) {
      e->session.reset();
      e->skip_reason = "could not create a stream";
    }
    return e;
  }();
  return *env;
}

smla_context* create_context() {
  const smla_options options = context_options(GpuEnv::get().prewarm_arch);
  smla_context* ctx = nullptr;
  EXPECT_EQ(smla_context_create(&options, &ctx), SMLA_OK) << smla_last_error();
  return ctx;
}

bool prewarmed(const smla_problem& problem, smla_context* ctx) {
  if (GpuEnv::get().prewarm_arch.empty()) return false;
  size_t bytes = 0;
  EXPECT_EQ(smla_prepare(ctx ? ctx : GpuEnv::get().ctx, &problem, 1024, &bytes), SMLA_OK)
      << smla_last_error();
  return true;
}

smla_problem make_problem(int heads, smla_kv_layout layout, smla_dtype q_dtype, int q_len,
                          std::initializer_list<std::pair<int, int>> sources, bool sink, bool lse) {
  smla_problem p{};
  p.num_heads = heads;
  p.kv_layout = layout;
  p.q_dtype = q_dtype;
  p.q_len = q_len;
  p.num_sources = static_cast<int>(sources.size());
  int s = 0;
  for (const auto& src : sources) p.sources[s++] = {SMLA_SOURCE_LIST, src.first, src.second, 0};
  p.has_sink = sink;
  p.want_lse = lse;
  return p;
}

ref::CaseSpec spec_for(const smla_problem& problem, int rows, uint64_t seed) {
  ref::CaseSpec spec;
  spec.problem = problem;
  spec.num_rows = rows;
  spec.seed = seed;
  if (problem.q_dtype == SMLA_FP8_E4M3) spec.q_scale = 0.75f;
  if (problem.kv_layout == SMLA_KV_FP8_UNIFORM) spec.kv_scale = 1.5f;
  return spec;
}

smla_problem with_structured_sources(smla_problem problem, int prefix_ratio) {
  problem.sources[0].kind = SMLA_SOURCE_WINDOW;
  if (prefix_ratio > 0) {
    problem.sources[1].kind = SMLA_SOURCE_PREFIX;
    problem.sources[1].ratio = prefix_ratio;
  }
  return problem;
}

ref::CaseSpec requests_spec(const smla_problem& problem, std::vector<int> rows,
                            std::vector<int> cached, uint64_t seed) {
  int total = 0;
  for (const int r : rows) total += r;
  ref::CaseSpec spec = spec_for(problem, total, seed);
  spec.request_rows = std::move(rows);
  spec.cached_tokens = std::move(cached);
  for (ref::SourceSpec& source : spec.sources) source.invalid_fraction = 0.02;
  return spec;
}

CheckResult check_case(const ref::CaseSpec& spec, const char* what,
                       const DeviceCaseOptions& options, smla_context* ctx, CallEntry entry) {
  GpuEnv& env = GpuEnv::get();
  if (ctx == nullptr) ctx = env.ctx;
  if (prewarmed(spec.problem, ctx)) return {};
  const std::string label = fmt::format("{} [{} rows={} seed={}]", what, problem_text(spec.problem),
                                        spec.num_rows, spec.seed);
  const ref::HostCase host = ref::make_random_case(spec);
  DeviceCase device_case;
  CheckResult result;
  result.status = DeviceCase::upload(*env.session, host, options, &device_case);
  if (result.status) {
    const smla_varlen varlen = host.host_varlen();
    const ref::ReferenceResult reference =
        ref::varlen_attention(host.problem, host.host_args(), &varlen);
    result = run_and_compare(ctx, *env.session, device_case, reference, env.stream, entry);
  }
  EXPECT_TRUE(result.status.is_ok()) << label << ": " << result.status.message();
  if (result.status) {
    EXPECT_TRUE(result.comparison.passed(ref::Tolerance{}))
        << label << ": " << result.comparison.summary();
  }
  return result;
}

}  // namespace smla::gpu_test
