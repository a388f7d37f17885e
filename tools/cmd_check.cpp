// `smla check`: every problem of a deployment through the GPU kernels against the CPU
// reference, on random inputs (invalid indices, random lengths, NaN in unselected slots).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "deployments/deployment.h"
#include "deployments/json_text.h"
#include "harness/device_case.h"
#include "reference/attention.h"
#include "runtime/validate.h"
#include "tools/commands.h"
#include "tools/problem_options.h"

namespace smla::tools {
namespace {

nlohmann::json comparison_json(const ref::Comparison& c) {
  return {{"out_rel_l2", c.out_rel_l2},
          {"lse_max_abs", c.lse_max_abs},
          {"nan_or_inf", c.nan_count},
          {"empty_row_errors", c.empty_row_errors},
          {"elements", c.elements}};
}

int run_check(const ProblemOptions& problems, const std::vector<int>& rows, uint64_t seed,
              bool json) {
  std::vector<std::pair<std::string, smla_problem>> selected;
  Status status = problems.resolve(&selected);
  std::unique_ptr<DeviceSession> session;
  if (status) status = DeviceSession::open(0, &session);
  smla_context* ctx = nullptr;
  if (status) status = status_of(smla_context_create(nullptr, &ctx));
  CUstream stream = nullptr;
  if (status) status = session->create_stream(&stream);
  if (!status) {
    smla_context_destroy(ctx);
    return report_failure("check", status.message(), json, exit_status_of(status));
  }
  int failures = 0;
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& [label, problem] : selected) {
    for (int r : rows) {
      ref::CaseSpec spec;
      spec.problem = problem;
      spec.num_rows = r * problem.q_len;
      spec.seed = seed++;
      const ref::HostCase host = ref::make_random_case(spec);
      DeviceCase device_case;
      CheckResult result;
      result.status = DeviceCase::upload(*session, host, {}, &device_case);
      if (result.status) {
        result = run_and_compare(ctx, *session, device_case,
                                 ref::attention(host.problem, host.host_args()), stream);
      }
      const bool ok = result.status && result.comparison.passed(ref::Tolerance{});
      failures += ok ? 0 : 1;
      if (json) {
        nlohmann::json c = {{"layer", label},
                            {"problem", problem_text(problem)},
                            {"rows", spec.num_rows},
                            {"seed", spec.seed},
                            {"passed", ok}};
        if (result.status) {
          c.update(comparison_json(result.comparison));
        } else {
          c["error"] = result.status.message();
        }
        cases.push_back(c);
        continue;
      }
      fmt::print("{} {:<10} {:<44} rows {:>4}: {}\n", ok ? "PASS" : "FAIL", label,
                 problem_text(problem), spec.num_rows,
                 result.status ? result.comparison.summary() : result.status.message());
    }
  }
  smla_context_destroy(ctx);
  if (json) {
    fmt::print("{}\n", json_text({{"cases", cases}, {"failed", failures}}));
  } else {
    fmt::print("{} problems x {} row counts: {} failed\n", selected.size(), rows.size(), failures);
  }
  return failures == 0 ? 0 : kExitFailed;
}

}  // namespace

void add_check_command(CLI::App& app, int* exit_code) {
  auto* c = app.add_subcommand("check",
                               "run a deployment's kernels against the CPU reference on the GPU");
  auto problems = std::make_shared<ProblemOptions>();
  auto rows = std::make_shared<std::vector<int>>(std::vector<int>{1, 5, 64});
  auto seed = std::make_shared<uint64_t>(1);
  problems->add_to(*c);
  add_list_option(*c, "--rows", rows.get(), "requests per call (rows = requests * q_len)",
                  CLI::Range(1, kMaxRows / SMLA_MAX_Q_LEN));
  auto json = std::make_shared<bool>(false);
  c->add_option("--seed", *seed, "first random seed");
  c->add_flag("--json", *json, "JSON output: every case's errors and the number failed");
  c->callback([=] { *exit_code = run_check(*problems, *rows, *seed, *json); });
}

}  // namespace smla::tools
