// A deployment: the attention layer types one model runs on one tensor-parallel rank, with the
// MTP query lengths it serves. `smla cache build`, `smla check` and
// `smla bench` take one, from an embedded preset or a JSON file (format in README.md).
#pragma once

#include <smla.h>

#include <string>
#include <vector>

#include "support/status.h"

namespace smla {

struct LayerType {
  std::string name;        // "swa", "csa", "hca"
  smla_problem problem{};  // q_len 1
};

struct Deployment {
  std::string name;
  std::vector<LayerType> layers;
  std::vector<int> q_lens = {1, 2};

  // Every problem the deployment can call: each layer type at each q_len.
  std::vector<std::pair<std::string, smla_problem>> problems() const;
};

// The context length that sizes a preset's HCA width unless one is given (context / 128
// entries), and the least one can be.
inline constexpr int kDefaultMaxContext = 131072;
inline constexpr int kMinMaxContext = 128;
// The deployment a command means when none is named (`scripts/setup.sh run` prewarms it).
inline constexpr const char* kDefaultDeployment = "dsv4-flash-tp8";

// "dsv4-flash-tp1|2|4|8", "dsv4-pro-tp1|2|4|8"; max_context 0 means kDefaultMaxContext.
std::vector<std::string> preset_names();
Status preset_deployment(const std::string& name, int max_context, Deployment* deployment);
Status load_deployment_file(const std::string& path, Deployment* deployment);
// The deployment of a file's JSON text; `where` (the file's path) opens every message.
Status parse_deployment_text(const std::string& text, const std::string& where,
                             Deployment* deployment);
// A preset name or a path to a JSON file. A file gives its own widths: a max_context other
// than 0 is an error for it (it would be ignored).
Status resolve_deployment(const std::string& name_or_path, int max_context, Deployment* deployment);

std::string problem_text(const smla_problem& problem);  // one line, for tables and logs

}  // namespace smla
