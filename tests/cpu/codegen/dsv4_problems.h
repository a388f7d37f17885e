// The decode problems of the DeepSeek-V4 deployments, written from the model shapes of
// docs/semantics.md so that tests below the tools layer need no tools/ presets: Flash (64 heads,
// CSA top-k 512, SWA-only layers) and Pro (128 heads, top-k 1024) at TP 1/2/4/8, every layer type
// at q_len 1 and 2, FlashMLA packed KV, bf16 q, sink, no lse. Window: page 256, width 128; CSA
// pages 64; HCA pages 2, width 1024 (128K context).
#pragma once

#include <smla.h>

#include <string>
#include <vector>

namespace smla::test {

struct NamedProblem {
  std::string name;  // "dsv4-flash-tp4/csa/qlen1"
  smla_problem problem;
};

inline smla_problem dsv4_window_problem(int heads) {
  smla_problem problem{};
  problem.num_heads = heads;
  problem.q_dtype = SMLA_BF16;
  problem.kv_layout = SMLA_KV_FP8_PACKED;
  problem.q_len = 1;
  problem.num_sources = 1;
  problem.sources[0] = {SMLA_SOURCE_LIST, 256, 128, 0};
  problem.has_sink = 1;
  return problem;
}

inline smla_problem dsv4_compressed_problem(int heads, int page_size, int width) {
  smla_problem problem = dsv4_window_problem(heads);
  problem.num_sources = 2;
  problem.sources[1] = {SMLA_SOURCE_LIST, page_size, width, 0};
  return problem;
}

// The same layers as a server's structured sources: the window as SMLA_SOURCE_WINDOW, and HCA's
// compressed cache (`prefix_ratio` 128) as SMLA_SOURCE_PREFIX; `prefix_ratio` 0 keeps CSA's
// compressed source a top-k list.
inline smla_problem dsv4_structured_problem(int heads, int page_size, int width, int prefix_ratio) {
  smla_problem problem = dsv4_compressed_problem(heads, page_size, width);
  problem.sources[0].kind = SMLA_SOURCE_WINDOW;
  if (prefix_ratio > 0) problem.sources[1] = {SMLA_SOURCE_PREFIX, page_size, width, prefix_ratio};
  return problem;
}

inline std::vector<NamedProblem> dsv4_problems() {
  struct Model {
    const char* name;
    int heads;
    int topk;
    bool swa_layers;
  };
  constexpr Model kModels[] = {{"flash", 64, 512, true}, {"pro", 128, 1024, false}};
  std::vector<NamedProblem> all;
  for (const Model& model : kModels) {
    for (int tp : {1, 2, 4, 8}) {
      const int heads = model.heads / tp;
      std::vector<std::pair<std::string, smla_problem>> layers;
      if (model.swa_layers) layers.emplace_back("swa", dsv4_window_problem(heads));
      layers.emplace_back("csa", dsv4_compressed_problem(heads, 64, model.topk));
      layers.emplace_back("hca", dsv4_compressed_problem(heads, 2, 1024));
      for (const auto& [layer, problem] : layers) {
        for (int q_len : {1, 2}) {
          NamedProblem named{"dsv4-" + std::string(model.name) + "-tp" + std::to_string(tp) + "/" +
                                 layer + "/qlen" + std::to_string(q_len),
                             problem};
          named.problem.q_len = q_len;
          all.push_back(named);
        }
      }
    }
  }
  return all;
}

}  // namespace smla::test
