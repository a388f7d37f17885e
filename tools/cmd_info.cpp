// `smla info` (version, the GPU or "no GPU") and `smla selftest` (the CPU reference against
// cases whose answer is known in closed form).
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "deployments/json_text.h"
#include "reference/attention.h"
#include "runtime/context.h"
#include "tools/commands.h"

namespace smla::tools {
namespace {

int run_info(bool json) {
  std::unique_ptr<Context> context;
  const Status status = Context::create(nullptr, &context);
  if (!status) {
    return report_failure("info", status.message(), json, kExitFailed);
  }
  if (json) {
    nlohmann::json gpu = nullptr;
    if (context->has_device()) {
      const DeviceInfo& d = context->device();
      gpu = {{"ordinal", d.ordinal},
             {"name", d.name},
             {"arch", d.arch->name},
             {"sm_count", d.sm_count},
             {"driver_version", d.driver_version}};
    }
    fmt::print("{}\n", json_text({{"version", smla_version()}, {"gpu", gpu}}));
    return 0;
  }
  fmt::print("{}\n", smla_version());
  if (context->has_device()) {
    const DeviceInfo& d = context->device();
    fmt::print("GPU {}: {} ({}, {} SMs, driver {})\n", d.ordinal, d.name, d.arch->name, d.sm_count,
               d.driver_version);
  } else {
    fmt::print("no GPU\n");
  }
  return 0;
}

uint16_t bf16_bits(float value) {  // exact for the values used below
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return static_cast<uint16_t>(bits >> 16);
}

// When every valid entry of a row is the same vector k, out = k * n e^s / (n e^s + e^sink) and
// lse = s + ln n with s = scale * <q, k>: the reference must agree to fp64 rounding.
int run_selftest() {
  int failures = 0;
  for (int n : {1, 7, 100}) {
    smla_problem p{};
    p.num_heads = 2;
    p.kv_layout = SMLA_KV_BF16;
    p.q_dtype = SMLA_BF16;
    p.q_len = 1;
    p.num_sources = 1;
    p.sources[0] = {SMLA_SOURCE_LIST, 4, n + 3, 0};
    p.has_sink = 1;
    p.want_lse = 1;
    std::vector<uint16_t> q(2 * 512), cache(4 * 512, 0);
    std::vector<float> kf(512), qf(2 * 512);
    for (int d = 0; d < 512; ++d) {
      kf[d] = static_cast<float>(((d * 37) % 17) - 8) / 8.0f;  // exact in bf16
      cache[2 * 512 + d] = bf16_bits(kf[d]);
    }
    for (int i = 0; i < 2 * 512; ++i) {
      qf[i] = static_cast<float>(((i * 11) % 9) - 4) / 16.0f;
      q[i] = bf16_bits(qf[i]);
    }
    std::vector<int32_t> indices(n + 3, 2);  // every listed entry is token 2
    indices[n] = -1;
    indices[n + 1] = 99;  // past the end: skipped
    indices[n + 2] = -7;
    const float sink[2] = {0.5f, -1.0f};
    smla_args a{};
    a.num_rows = 1;
    a.q = q.data();
    a.q_row_stride = 1024;
    a.q_head_stride = 512;
    a.sources[0] = {cache.data(), 4 * 1024, 1, indices.data(), n + 3, nullptr};
    a.sink = sink;
    a.softmax_scale = 0.125f;
    const ref::ReferenceResult r = ref::attention(p, a, 1);
    for (int h = 0; h < 2; ++h) {
      double dot = 0;
      for (int d = 0; d < 512; ++d) dot += static_cast<double>(qf[h * 512 + d]) * kf[d];
      const double s = 0.125 * dot;
      const double weight =
          n * std::exp(s) / (n * std::exp(s) + std::exp(static_cast<double>(sink[h])));
      double err = std::fabs(r.lse[h] - (s + std::log(static_cast<double>(n))));
      for (int d = 0; d < 512; ++d)
        err = std::max(err, std::fabs(r.out[h * 512 + d] - weight * kf[d]));
      const bool ok = err < 1e-12;
      failures += ok ? 0 : 1;
      fmt::print("{} reference, {} identical entries, head {}: max error {:.2e}\n",
                 ok ? "PASS" : "FAIL", n, h, err);
    }
  }
  return failures == 0 ? 0 : kExitFailed;
}

}  // namespace

void add_info_commands(CLI::App& app, int* exit_code) {
  CLI::App* info = app.add_subcommand("info", "print the version and the GPU");
  auto json = std::make_shared<bool>(false);
  info->add_flag("--json", *json, "JSON object: version, gpu (null without one)");
  info->callback([=] { *exit_code = run_info(*json); });
  app.add_subcommand("selftest", "check the CPU reference against closed-form cases")
      ->callback([=] { *exit_code = run_selftest(); });
}

}  // namespace smla::tools
