// Command-line selection of problems, shared by `smla check` and `smla bench`: a deployment
// (preset or JSON file) and optional overrides of its layout, q dtype, heads and q_len, or a
// problem spelled out with --heads and --sources.
#pragma once

#include <smla.h>

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "support/status.h"

namespace smla::tools {

struct ProblemOptions {
  std::string deployment;           // preset name or file
  int max_context = 0;              // 0: kDefaultMaxContext (presets only)
  std::vector<std::string> layers;  // empty: every layer type
  std::string layout;               // packed | uniform | bf16
  std::string q_dtype;              // bf16 | fp8
  int heads = 0;
  std::string sources;  // "256:128,64:1024" (page_size:width)
  std::vector<int> q_lens;
  bool lse = false;
  bool no_sink = false;

  void add_to(CLI::App& command);
  // The selected problems with a label each.
  Status resolve(std::vector<std::pair<std::string, smla_problem>>* problems) const;
};

}  // namespace smla::tools
