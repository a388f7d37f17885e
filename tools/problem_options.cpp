#include "tools/problem_options.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <sstream>

#include "deployments/deployment.h"
#include "runtime/validate.h"
#include "tools/commands.h"

namespace smla::tools {

void ProblemOptions::add_to(CLI::App& c) {
  c.add_option("--preset,--deployment", deployment,
               "a preset (dsv4-flash-tp8, ...) or a deployment JSON file");
  c.add_option("--max-context", max_context,
               "presets: context length sizing the HCA width (entries = context / 128; default "
               "131072)")
      ->check(CLI::Range(kMinMaxContext, INT_MAX));
  add_list_option(c, "--layer", &layers, "layer types of the deployment to use (swa, csa, hca)");
  c.add_option("--layout", layout, "override: packed, uniform or bf16");
  c.add_option("--q", q_dtype, "override: bf16 or fp8");
  c.add_option("--heads", heads, "override: heads on this rank")
      ->check(CLI::Range(1, SMLA_MAX_HEADS));
  c.add_option("--sources", sources, "instead of a deployment: page_size:width[,page_size:width]");
  add_list_option(c, "--q-len", &q_lens, "override: MTP query lengths");
  c.add_flag("--lse", lse, "also return the lse");
  c.add_flag("--no-sink", no_sink, "without the attention sink");
}

Status ProblemOptions::resolve(std::vector<std::pair<std::string, smla_problem>>* problems) const {
  Deployment d;
  if (!sources.empty()) {
    LayerType layer;
    layer.name = "custom";
    smla_problem& p = layer.problem;
    p.num_heads = heads > 0 ? heads : 16;
    p.q_dtype = SMLA_BF16;
    p.kv_layout = SMLA_KV_FP8_PACKED;
    p.q_len = 1;
    p.has_sink = 1;
    std::stringstream list(sources);
    std::string item;
    while (std::getline(list, item, ',')) {
      int page = 0, width = 0, consumed = 0;
      if (p.num_sources == SMLA_MAX_SOURCES ||
          std::sscanf(item.c_str(), "%d:%d%n", &page, &width, &consumed) != 2 ||
          consumed != static_cast<int>(item.size())) {
        return error(SMLA_ERR_INVALID_ARGUMENT,
                     "--sources \"{}\": expected page_size:width[,page_size:width]", sources);
      }
      p.sources[p.num_sources++] = {SMLA_SOURCE_LIST, page, width, 0};
    }
    d.layers.push_back(layer);
    d.q_lens = {1};
  } else {
    if (deployment.empty())
      return Status(SMLA_ERR_INVALID_ARGUMENT, "name a --preset, a --deployment file or --sources");
    SMLA_TRY(resolve_deployment(deployment, max_context, &d));
  }
  if (!q_lens.empty()) d.q_lens = q_lens;
  // Every --layer must name a layer: one mistyped beside a right one selected less, silently.
  std::string names;
  for (const LayerType& layer : d.layers) names += (names.empty() ? "" : ", ") + layer.name;
  for (const std::string& wanted : layers) {
    const auto named = [&](const LayerType& layer) { return layer.name == wanted; };
    if (std::none_of(d.layers.begin(), d.layers.end(), named)) {
      return error(SMLA_ERR_INVALID_ARGUMENT,
                   "no layer of the deployment matches --layer {} (it has {})", wanted, names);
    }
  }
  for (const auto& [label, problem] : d.problems()) {
    const std::string layer = label.substr(0, label.find('/'));
    if (!layers.empty() && std::find(layers.begin(), layers.end(), layer) == layers.end()) continue;
    smla_problem p = problem;
    if (heads > 0) p.num_heads = heads;
    if (!layout.empty()) {
      if (layout == "packed")
        p.kv_layout = SMLA_KV_FP8_PACKED;
      else if (layout == "uniform")
        p.kv_layout = SMLA_KV_FP8_UNIFORM;
      else if (layout == "bf16")
        p.kv_layout = SMLA_KV_BF16;
      else
        return error(SMLA_ERR_INVALID_ARGUMENT, "--layout {}: expected packed, uniform or bf16",
                     layout);
    }
    if (!q_dtype.empty()) {
      if (q_dtype == "bf16")
        p.q_dtype = SMLA_BF16;
      else if (q_dtype == "fp8")
        p.q_dtype = SMLA_FP8_E4M3;
      else
        return error(SMLA_ERR_INVALID_ARGUMENT, "--q {}: expected bf16 or fp8", q_dtype);
    }
    if (lse) p.want_lse = 1;
    if (no_sink) p.has_sink = 0;
    // What the C API would refuse, refused here with the problem named.
    const Status valid = validate_problem(&p);
    if (!valid) return Status(valid.code(), label + ": " + valid.message());
    problems->emplace_back(label, p);
  }
  return ok_status();
}

}  // namespace smla::tools
