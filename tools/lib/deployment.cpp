#include "tools/lib/deployment.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

namespace smla::tools {
namespace {

struct ModelShape {
  const char* family;
  int heads;        // query heads of the whole model
  int topk;         // CSA index_topk
  bool swa_layers;  // has SWA-only layers
};

constexpr ModelShape kModels[] = {{"flash", 64, 512, true}, {"pro", 128, 1024, false}};
constexpr int kWindow = 128;
constexpr int kWindowPage = 256;
constexpr int kCsaPage = 64;
constexpr int kHcaPage = 2;
constexpr int kHcaRatio = 128;

smla_problem base_problem(int heads) {
  smla_problem p{};
  p.num_heads = heads;
  p.q_dtype = SMLA_BF16;
  p.kv_layout = SMLA_KV_FP8_PACKED;
  p.q_len = 1;
  p.num_sources = 1;
  p.sources[0] = {SMLA_SOURCE_LIST, kWindowPage, kWindow};
  p.has_sink = 1;
  p.want_lse = 0;
  return p;
}

LayerType with_compressed(const char* name, int heads, int page_size, int width) {
  LayerType layer{name, base_problem(heads)};
  layer.problem.num_sources = 2;
  layer.problem.sources[1] = {SMLA_SOURCE_LIST, page_size, width};
  return layer;
}

Status parse_layout(const std::string& text, smla_kv_layout* layout) {
  if (text == "fp8_packed")
    *layout = SMLA_KV_FP8_PACKED;
  else if (text == "fp8_uniform")
    *layout = SMLA_KV_FP8_UNIFORM;
  else if (text == "bf16")
    *layout = SMLA_KV_BF16;
  else
    return error(SMLA_ERR_INVALID_ARGUMENT,
                 "kv_layout \"{}\": expected fp8_packed, fp8_uniform or bf16", text);
  return Status::ok();
}

Status parse_dtype(const std::string& text, smla_dtype* dtype) {
  if (text == "bf16")
    *dtype = SMLA_BF16;
  else if (text == "fp8_e4m3")
    *dtype = SMLA_FP8_E4M3;
  else
    return error(SMLA_ERR_INVALID_ARGUMENT, "q_dtype \"{}\": expected bf16 or fp8_e4m3", text);
  return Status::ok();
}

}  // namespace

std::vector<std::pair<std::string, smla_problem>> Deployment::problems() const {
  std::vector<std::pair<std::string, smla_problem>> all;
  for (const LayerType& layer : layers) {
    for (int q_len : q_lens) {
      smla_problem p = layer.problem;
      p.q_len = q_len;
      all.emplace_back(fmt::format("{}/qlen{}", layer.name, q_len), p);
    }
  }
  return all;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const ModelShape& m : kModels)
    for (int tp : {1, 2, 4, 8}) names.push_back(fmt::format("dsv4-{}-tp{}", m.family, tp));
  return names;
}

Status preset_deployment(const std::string& name, int max_context, Deployment* deployment) {
  if (max_context < kHcaRatio) {
    return error(SMLA_ERR_INVALID_ARGUMENT, "--max-context = {}: must be >= {}", max_context,
                 kHcaRatio);
  }
  for (const ModelShape& m : kModels) {
    for (int tp : {1, 2, 4, 8}) {
      if (name != fmt::format("dsv4-{}-tp{}", m.family, tp)) continue;
      const int heads = m.heads / tp;
      Deployment d;
      d.name = name;
      if (m.swa_layers) d.layers.push_back({"swa", base_problem(heads)});
      d.layers.push_back(with_compressed("csa", heads, kCsaPage, m.topk));
      d.layers.push_back(with_compressed("hca", heads, kHcaPage, max_context / kHcaRatio));
      *deployment = d;
      return Status::ok();
    }
  }
  return error(SMLA_ERR_INVALID_ARGUMENT, "unknown preset \"{}\"", name);
}

Status load_deployment_file(const std::string& path, Deployment* deployment) {
  std::ifstream file(path);
  if (!file) return error(SMLA_ERR_INVALID_ARGUMENT, "cannot open deployment file {}", path);
  try {
    const nlohmann::json j = nlohmann::json::parse(file);
    Deployment d;
    d.name = j.value("name", path);
    d.q_lens = j.value("q_lens", std::vector<int>{1, 2});
    d.max_rows = j.value("max_rows", 1024);
    smla_kv_layout layout = SMLA_KV_FP8_PACKED;
    smla_dtype dtype = SMLA_BF16;
    SMLA_TRY(parse_layout(j.value("kv_layout", std::string("fp8_packed")), &layout));
    SMLA_TRY(parse_dtype(j.value("q_dtype", std::string("bf16")), &dtype));
    for (const nlohmann::json& l : j.at("layers")) {
      LayerType layer{l.at("name").get<std::string>(), base_problem(j.at("heads").get<int>())};
      layer.problem.kv_layout = layout;
      layer.problem.q_dtype = dtype;
      layer.problem.has_sink = j.value("has_sink", true) ? 1 : 0;
      layer.problem.want_lse = j.value("want_lse", false) ? 1 : 0;
      const nlohmann::json& sources = l.at("sources");
      layer.problem.num_sources = static_cast<int>(sources.size());
      if (layer.problem.num_sources < 1 || layer.problem.num_sources > SMLA_MAX_SOURCES) {
        return error(SMLA_ERR_INVALID_ARGUMENT, "{}: layer {} has {} sources (1 or 2)", path,
                     layer.name, sources.size());
      }
      for (int s = 0; s < layer.problem.num_sources; ++s) {
        layer.problem.sources[s] = {SMLA_SOURCE_LIST, sources[s].at("page_size").get<int>(),
                                    sources[s].at("width").get<int>()};
      }
      d.layers.push_back(layer);
    }
    *deployment = d;
  } catch (const nlohmann::json::exception& e) {
    return error(SMLA_ERR_INVALID_ARGUMENT, "{}: {}", path, e.what());
  }
  return Status::ok();
}

Status resolve_deployment(const std::string& name_or_path, int max_context,
                          Deployment* deployment) {
  if (name_or_path.rfind("dsv4-", 0) == 0)
    return preset_deployment(name_or_path, max_context, deployment);
  return load_deployment_file(name_or_path, deployment);
}

std::string problem_text(const smla_problem& p) {
  std::string sources;
  for (int s = 0; s < p.num_sources; ++s) {
    sources += fmt::format("{}p{}w{}", s ? "+" : "", p.sources[s].page_size, p.sources[s].width);
  }
  const char* layout = p.kv_layout == SMLA_KV_FP8_PACKED    ? "packed"
                       : p.kv_layout == SMLA_KV_FP8_UNIFORM ? "uniform"
                                                            : "bf16";
  return fmt::format("h{} {} q={} {} qlen{}{}{}", p.num_heads, layout,
                     p.q_dtype == SMLA_BF16 ? "bf16" : "fp8", sources, p.q_len,
                     p.has_sink ? " sink" : "", p.want_lse ? " lse" : "");
}

}  // namespace smla::tools
