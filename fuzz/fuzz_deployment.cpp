// libFuzzer target: the deployment file parser (deployments/deployment.h, docs/fuzzing.md). The
// input is a file's text. Checked: a text either parses or is INVALID_ARGUMENT with a message
// that opens with the file's name; nothing throws out of the parser; a parsed deployment holds
// what the format promises (named layers of 1 or 2 list sources sharing the file's fields, at
// least one q_len) and, written back as a file, parses to the same deployment.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>

#include "codegen/names.h"
#include "deployments/deployment.h"

namespace smla::fuzz {
namespace {

constexpr const char* kWhere = "fuzz.json";

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_deployment: %s\n", what.c_str());
  std::abort();
}

// The deployment as a file of the README's format.
std::string file_text(const Deployment& d) {
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerType& layer : d.layers) {
    nlohmann::json sources = nlohmann::json::array();
    for (int s = 0; s < layer.problem.num_sources; ++s) {
      sources.push_back({{"page_size", layer.problem.sources[s].page_size},
                         {"width", layer.problem.sources[s].width}});
    }
    layers.push_back({{"name", layer.name}, {"sources", sources}});
  }
  // With no layers the file's heads and flags are kept nowhere: any valid ones will do.
  smla_problem first{};
  first.num_heads = 1;
  if (!d.layers.empty()) first = d.layers[0].problem;
  nlohmann::json file = {{"name", d.name},
                         {"heads", first.num_heads},
                         {"q_dtype", dtype_name(first.q_dtype)},
                         {"kv_layout", layout_name(first.kv_layout)},
                         {"has_sink", first.has_sink != 0},
                         {"want_lse", first.want_lse != 0},
                         {"q_lens", d.q_lens},
                         {"layers", layers}};
  return file.dump();
}

void check_parsed(const Deployment& d) {
  if (d.q_lens.empty()) fail("a deployment without q_lens");
  for (const LayerType& layer : d.layers) {
    const smla_problem& p = layer.problem;
    const smla_problem& first = d.layers[0].problem;
    if (layer.name.empty()) fail("a layer without a name");
    if (p.num_sources < 1 || p.num_sources > SMLA_MAX_SOURCES) fail("a layer of bad sources");
    for (int s = 0; s < p.num_sources; ++s) {
      if (p.sources[s].kind != SMLA_SOURCE_LIST) fail("a source that is not a list");
    }
    if (p.q_len != 1) fail("a layer type whose q_len is not 1");
    if (p.num_heads != first.num_heads || p.q_dtype != first.q_dtype ||
        p.kv_layout != first.kv_layout || p.has_sink != first.has_sink ||
        p.want_lse != first.want_lse) {
      fail("layers that differ in the file's fields");
    }
    (void)problem_text(p);
  }
  if (d.problems().size() != d.layers.size() * d.q_lens.size()) fail("problems() lost some");
}

bool same(const Deployment& a, const Deployment& b) {
  if (a.name != b.name || a.q_lens != b.q_lens || a.layers.size() != b.layers.size()) return false;
  for (size_t i = 0; i < a.layers.size(); ++i) {
    if (a.layers[i].name != b.layers[i].name ||
        std::memcmp(&a.layers[i].problem, &b.layers[i].problem, sizeof(smla_problem)) != 0) {
      return false;
    }
  }
  return true;
}

void run(const std::string& text) {
  Deployment parsed;
  const Status status = parse_deployment_text(text, kWhere, &parsed);
  if (!status) {
    if (status.code() != SMLA_ERR_INVALID_ARGUMENT) fail("a status other than INVALID_ARGUMENT");
    if (status.message().rfind(std::string(kWhere) + ": ", 0) != 0) {
      fail("a message that does not open with the file: " + status.message());
    }
    return;
  }
  check_parsed(parsed);
  const std::string written = file_text(parsed);
  Deployment again;
  const Status reparsed = parse_deployment_text(written, kWhere, &again);
  if (!reparsed)
    fail("the written deployment does not parse: " + reparsed.message() + "\n" + written);
  if (!same(parsed, again)) fail("the written deployment parses to another one:\n" + written);
}

}  // namespace
}  // namespace smla::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    smla::fuzz::run(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const std::exception& e) {
    smla::fuzz::fail(std::string("an exception escaped: ") + e.what());
  }
  return 0;
}
