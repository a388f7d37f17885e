// `smla plan`: a problem's plan (plan/decode_plan.h) without a GPU: the kernels smla_prepare
// loads, with their key texts, and which of them serves which row counts, in each mode. The
// plan printed is the heuristic's: tuning rows apply only on the device they were measured on.
#include <fmt/format.h>

#include <climits>
#include <memory>
#include <nlohmann/json.hpp>

#include "deployments/deployment.h"
#include "deployments/json_text.h"
#include "plan/decode_plan.h"
#include "tools/arch_options.h"
#include "tools/commands.h"
#include "tools/problem_options.h"
#include "tools/size_text.h"

namespace smla::tools {
namespace {

struct PlanCommand {
  ProblemOptions problems;
  std::vector<std::string> archs;
  std::string mode = "both";
  int max_rows = 1024;
  bool json = false;
};

const char* how_text(const RowRange& r) {
  return !r.split ? "whole rows" : r.prefix_segments > 1 ? "prefix items" : "split";
}

nlohmann::json plan_json(const std::string& layer, const smla_problem& problem,
                         const ArchSpec& arch, bool batch_variant, const DecodePlan& plan,
                         int max_rows) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const PlannedKernel& k : plan.kernels()) {
    kernels.push_back({{"role", kernel_role_name(k.role)},
                       {"decode", k.decode.text()},
                       {"combine", k.combine ? nlohmann::json(k.combine->text()) : nullptr}});
  }
  nlohmann::json ranges = nlohmann::json::array();
  for (const RowRange& r : plan.row_ranges(max_rows)) {
    ranges.push_back({{"first_rows", r.first_rows},
                      {"last_rows", r.last_rows > 0 ? nlohmann::json(r.last_rows) : nullptr},
                      {"kernel", r.kernel},
                      {"how", how_text(r)},
                      {"prefix_segments", r.prefix_segments}});
  }
  return {{"layer", layer},       {"problem", problem_text(problem)},
          {"arch", arch.name},    {"mode", batch_variant ? "batch-variant" : "batch-invariant"},
          {"max_rows", max_rows}, {"workspace_bytes", plan.workspace_bytes(max_rows)},
          {"kernels", kernels},   {"ranges", ranges}};
}

void print_plan(const nlohmann::json& p) {
  fmt::print("{} on {}, {}: {}\n", p["layer"].get<std::string>(), p["arch"].get<std::string>(),
             p["mode"].get<std::string>(), p["problem"].get<std::string>());
  fmt::print("  workspace for {} rows: {}\n", p["max_rows"].get<int>(),
             size_text(p["workspace_bytes"].get<int64_t>()));
  int index = 0;
  for (const nlohmann::json& k : p["kernels"]) {
    fmt::print("  kernel {} ({}): {}\n", index++, k["role"].get<std::string>(),
               k["decode"].get<std::string>());
    if (!k["combine"].is_null()) fmt::print("    + {}\n", k["combine"].get<std::string>());
  }
  for (const nlohmann::json& r : p["ranges"]) {
    const int first = r["first_rows"].get<int>();
    const std::string rows = r["last_rows"].is_null() ? fmt::format("{}+", first)
                             : r["last_rows"].get<int>() == first
                                 ? fmt::format("{}", first)
                                 : fmt::format("{}-{}", first, r["last_rows"].get<int>());
    const std::string prefix =
        r["prefix_segments"].get<int>() > 1
            ? fmt::format(" (first item {} segments)", r["prefix_segments"].get<int>())
            : "";
    fmt::print("  rows {:<11} kernel {}, {}{}\n", rows, r["kernel"].get<int>(),
               r["how"].get<std::string>(), prefix);
  }
}

int run_plan(const PlanCommand& o) {
  std::vector<std::pair<std::string, smla_problem>> problems;
  Status status = o.problems.resolve(&problems);
  std::vector<const ArchSpec*> archs;
  if (status) status = resolve_archs(o.archs, {"sm_90a"}, &archs);
  if (!status) return report_failure("plan", status.message(), o.json, exit_status_of(status));
  std::vector<bool> modes;
  if (o.mode != "variant") modes.push_back(false);
  if (o.mode != "invariant") modes.push_back(true);
  nlohmann::json out = nlohmann::json::array();
  std::vector<std::string> shown;  // layers: problems differing only in q_len share a plan
  for (const auto& [label, problem] : problems) {
    const std::string layer = label.substr(0, label.find('/'));
    if (std::find(shown.begin(), shown.end(), layer) != shown.end()) continue;
    shown.push_back(layer);
    for (const ArchSpec* arch : archs) {
      for (const bool batch_variant : modes) {
        PlanSettings settings;
        settings.batch_variant = batch_variant;
        std::unique_ptr<DecodePlan> plan;
        status = DecodePlan::build(*arch, problem, settings, {}, &plan);
        if (!status) return report_failure("plan", status.message(), o.json, kExitFailed);
        out.push_back(plan_json(layer, problem, *arch, batch_variant, *plan, o.max_rows));
      }
    }
  }
  if (o.json) {
    fmt::print("{}\n", json_text(out));
    return 0;
  }
  for (const nlohmann::json& p : out) print_plan(p);
  return 0;
}

}  // namespace

void add_plan_command(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<PlanCommand>();
  auto* c = app.add_subcommand(
      "plan", "the kernels a problem's prepare loads and the rows each serves (no GPU needed)");
  o->problems.add_to(*c);
  add_list_option(
      *c, "--arch", &o->archs,
      fmt::format("targets: {} (default: the local GPU's, or sm_90a without one)", arch_names()));
  c->add_option("--mode", o->mode, "invariant, variant or both (the default)")
      ->check(CLI::IsMember({"invariant", "variant", "both"}));
  c->add_option("--max-rows", o->max_rows,
                "the rows smla_prepare is given: the workspace, and how far the ranges go")
      ->check(CLI::Range(1, INT_MAX));
  c->add_flag("--json", o->json, "JSON output");
  c->callback([o, exit_code] { *exit_code = run_plan(*o); });
}

}  // namespace smla::tools
