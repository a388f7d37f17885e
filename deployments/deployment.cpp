#include "deployments/deployment.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <type_traits>

#include "codegen/names.h"
#include "deployments/json_text.h"

namespace smla {
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
constexpr int kHcaRatio = kMinMaxContext;  // entries per HCA entry: a context of one

smla_problem base_problem(int heads) {
  smla_problem p{};
  p.num_heads = heads;
  p.q_dtype = SMLA_BF16;
  p.kv_layout = SMLA_KV_FP8_PACKED;
  p.q_len = 1;
  p.num_sources = 1;
  p.sources[0] = {SMLA_SOURCE_LIST, kWindowPage, kWindow, 0};
  p.has_sink = 1;
  p.want_lse = 0;
  return p;
}

LayerType with_compressed(const char* name, int heads, int page_size, int width) {
  LayerType layer{name, base_problem(heads)};
  layer.problem.num_sources = 2;
  layer.problem.sources[1] = {SMLA_SOURCE_LIST, page_size, width, 0};
  return layer;
}

// A deployment file names layouts and dtypes as kernel keys do (codegen/kernel_key.h). `where`
// names the field as every message of a file does: "file.json: kv_layout".
Status parse_layout(const std::string& text, const std::string& where, smla_kv_layout* layout) {
  for (const smla_kv_layout l : {SMLA_KV_FP8_PACKED, SMLA_KV_FP8_UNIFORM, SMLA_KV_BF16}) {
    if (text != layout_name(l)) continue;
    *layout = l;
    return ok_status();
  }
  return error(SMLA_ERR_INVALID_ARGUMENT, "{} = {}: expected fp8_packed, fp8_uniform or bf16",
               where, json_text(nlohmann::json(text), -1));
}

Status parse_dtype(const std::string& text, const std::string& where, smla_dtype* dtype) {
  for (const smla_dtype d : {SMLA_BF16, SMLA_FP8_E4M3}) {
    if (text != dtype_name(d)) continue;
    *dtype = d;
    return ok_status();
  }
  return error(SMLA_ERR_INVALID_ARGUMENT, "{} = {}: expected bf16 or fp8_e4m3", where,
               json_text(nlohmann::json(text), -1));
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
  if (max_context == 0) max_context = kDefaultMaxContext;
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
      return ok_status();
    }
  }
  return error(SMLA_ERR_INVALID_ARGUMENT, "unknown preset \"{}\"", name);
}

namespace {

using Json = nlohmann::json;

// NOTE: a message shows a bad field's value, and printing a value recurses once per level it
// nests: 10^5 nested arrays overflowed the stack. A valid file nests five levels (the file, its
// layers, a layer, its sources, a source), so anything deeper is refused while parsing.
constexpr int kMaxNesting = 16;

// The keys of a deployment file, of a layer and of a source: anything else is a typo that would
// otherwise fall back to a default unnoticed.
Status check_keys(const Json& object, std::initializer_list<const char*> known,
                  const std::string& where) {
  if (!object.is_object()) return error(SMLA_ERR_INVALID_ARGUMENT, "{}: must be an object", where);
  for (const auto& item : object.items()) {
    bool found = false;
    for (const char* key : known) found = found || item.key() == key;
    if (!found) {
      return error(SMLA_ERR_INVALID_ARGUMENT, "{}: unknown key \"{}\" (known: {})", where,
                   item.key(), fmt::join(known, ", "));
    }
  }
  return ok_status();
}

// An int, not a float, a bool or a number an int cannot hold (get<int>() would narrow them).
// `where` names the field: "file.json: layers[0].sources[1].width".
Status get_int(const Json& value, const std::string& where, int* out) {
  if (!value.is_number_integer() ||
      (value.is_number_unsigned()
           ? value.get<uint64_t>() > INT_MAX
           : value.get<int64_t>() < INT_MIN || value.get<int64_t>() > INT_MAX)) {
    return error(SMLA_ERR_INVALID_ARGUMENT, "{} = {}: must be a 32-bit integer", where,
                 json_text(value, -1));
  }
  *out = value.get<int>();
  return ok_status();
}

// An optional bool or string field: `fallback` when absent. `where` names the field, as for
// get_int.
template <typename T>
Status get_optional(const Json& object, const char* key, const T& fallback,
                    const std::string& where, T* out) {
  *out = fallback;
  if (!object.contains(key)) return ok_status();
  const Json& value = object.at(key);
  constexpr bool kBool = std::is_same_v<T, bool>;
  if (kBool ? !value.is_boolean() : !value.is_string()) {
    return error(SMLA_ERR_INVALID_ARGUMENT, "{} = {}: must be {}", where, json_text(value, -1),
                 kBool ? "true or false" : "a string");
  }
  *out = value.get<T>();
  return ok_status();
}

// "list" (the default), "window" or "prefix" (docs/semantics.md); a prefix also needs "ratio".
Status parse_source_kind(const std::string& text, const std::string& where,
                         smla_source_kind* kind) {
  for (const smla_source_kind k : {SMLA_SOURCE_LIST, SMLA_SOURCE_WINDOW, SMLA_SOURCE_PREFIX}) {
    if (text == source_kind_name(k)) {
      *kind = k;
      return ok_status();
    }
  }
  return error(SMLA_ERR_INVALID_ARGUMENT, "{} = \"{}\": expected list, window or prefix", where,
               text);
}

Status parse_deployment(const Json& j, const std::string& path, Deployment* deployment) {
  SMLA_TRY(check_keys(
      j, {"name", "heads", "q_dtype", "kv_layout", "has_sink", "want_lse", "q_lens", "layers"},
      path));
  // Fields are named from the file: "file.json: heads", "file.json: layers[0].sources[1].width".
  const auto field = [&](const std::string& object, const std::string& key) {
    return object == path ? path + ": " + key : object + "." + key;
  };
  Deployment d;
  SMLA_TRY(get_optional(j, "name", path, field(path, "name"), &d.name));
  int heads = 0;
  if (!j.contains("heads")) return error(SMLA_ERR_INVALID_ARGUMENT, "{}: no \"heads\"", path);
  SMLA_TRY(get_int(j.at("heads"), field(path, "heads"), &heads));
  if (j.contains("q_lens")) {
    const Json& q_lens = j.at("q_lens");
    if (!q_lens.is_array() || q_lens.empty()) {
      return error(SMLA_ERR_INVALID_ARGUMENT, "{}: must be a non-empty array",
                   field(path, "q_lens"));
    }
    d.q_lens.clear();
    for (size_t i = 0; i < q_lens.size(); ++i) {
      int q_len = 0;
      SMLA_TRY(get_int(q_lens[i], field(path, fmt::format("q_lens[{}]", i)), &q_len));
      d.q_lens.push_back(q_len);
    }
  }
  std::string text;
  smla_kv_layout layout = SMLA_KV_FP8_PACKED;
  smla_dtype dtype = SMLA_BF16;
  SMLA_TRY(
      get_optional<std::string>(j, "kv_layout", "fp8_packed", field(path, "kv_layout"), &text));
  SMLA_TRY(parse_layout(text, field(path, "kv_layout"), &layout));
  SMLA_TRY(get_optional<std::string>(j, "q_dtype", "bf16", field(path, "q_dtype"), &text));
  SMLA_TRY(parse_dtype(text, field(path, "q_dtype"), &dtype));
  bool has_sink = true, want_lse = false;
  SMLA_TRY(get_optional(j, "has_sink", true, field(path, "has_sink"), &has_sink));
  SMLA_TRY(get_optional(j, "want_lse", false, field(path, "want_lse"), &want_lse));
  if (!j.contains("layers") || !j.at("layers").is_array()) {
    return error(SMLA_ERR_INVALID_ARGUMENT, "{}: \"layers\" must be an array of layer types", path);
  }
  const Json& layers = j.at("layers");
  for (size_t i = 0; i < layers.size(); ++i) {
    const Json& l = layers[i];
    const std::string where = field(path, fmt::format("layers[{}]", i));
    SMLA_TRY(check_keys(l, {"name", "sources"}, where));
    LayerType layer{"", base_problem(heads)};
    SMLA_TRY(get_optional<std::string>(l, "name", "", field(where, "name"), &layer.name));
    if (layer.name.empty()) return error(SMLA_ERR_INVALID_ARGUMENT, "{}: no \"name\"", where);
    layer.problem.kv_layout = layout;
    layer.problem.q_dtype = dtype;
    layer.problem.has_sink = has_sink ? 1 : 0;
    layer.problem.want_lse = want_lse ? 1 : 0;
    const Json sources = l.value("sources", Json::array());
    if (!sources.is_array() || sources.empty() || sources.size() > SMLA_MAX_SOURCES) {
      return error(SMLA_ERR_INVALID_ARGUMENT, "{}: layer {} needs 1 or 2 sources", where,
                   layer.name);
    }
    layer.problem.num_sources = static_cast<int>(sources.size());
    for (int s = 0; s < layer.problem.num_sources; ++s) {
      const std::string at = field(where, fmt::format("sources[{}]", s));
      SMLA_TRY(check_keys(sources[s], {"page_size", "width", "kind", "ratio"}, at));
      smla_source_desc& source = layer.problem.sources[s];
      source = {SMLA_SOURCE_LIST, 0, 0, 0};
      for (const auto& [key, value] :
           {std::pair{"page_size", &source.page_size}, std::pair{"width", &source.width}}) {
        if (!sources[s].contains(key)) {
          return error(SMLA_ERR_INVALID_ARGUMENT, "{}: no \"{}\"", at, key);
        }
        SMLA_TRY(get_int(sources[s].at(key), field(at, key), value));
      }
      SMLA_TRY(get_optional<std::string>(sources[s], "kind", "list", field(at, "kind"), &text));
      SMLA_TRY(parse_source_kind(text, field(at, "kind"), &source.kind));
      if (sources[s].contains("ratio")) {
        SMLA_TRY(get_int(sources[s].at("ratio"), field(at, "ratio"), &source.ratio));
      }
    }
    d.layers.push_back(layer);
  }
  *deployment = d;
  return ok_status();
}

}  // namespace

Status load_deployment_file(const std::string& path, Deployment* deployment) {
  // NOTE: only a regular file: a directory threw from the stream, a FIFO blocked.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return error(SMLA_ERR_INVALID_ARGUMENT, "cannot open deployment file {}: {}", path,
                 std::filesystem::exists(path, ec) ? "not a regular file" : "no such file");
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) return error(SMLA_ERR_INVALID_ARGUMENT, "cannot open deployment file {}", path);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) return error(SMLA_ERR_INVALID_ARGUMENT, "cannot read deployment file {}", path);
  return parse_deployment_text(text, path, deployment);
}

Status parse_deployment_text(const std::string& text, const std::string& where,
                             Deployment* deployment) {
  const Json::parser_callback_t limit_nesting = [](int depth, Json::parse_event_t event, Json&) {
    const bool opens =
        event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start;
    if (opens && depth >= kMaxNesting) {
      throw std::length_error(
          fmt::format("arrays and objects nest deeper than {} levels", kMaxNesting));
    }
    return true;
  };
  Json j;
  try {
    j = Json::parse(text, limit_nesting);
  } catch (const std::exception& e) {
    return error(SMLA_ERR_INVALID_ARGUMENT, "{}: {}", where, e.what());
  }
  return parse_deployment(j, where, deployment);
}

Status resolve_deployment(const std::string& name_or_path, int max_context,
                          Deployment* deployment) {
  std::error_code ec;
  if (name_or_path.rfind("dsv4-", 0) == 0 && !std::filesystem::exists(name_or_path, ec))
    return preset_deployment(name_or_path, max_context, deployment);
  if (max_context != 0) {
    return error(SMLA_ERR_INVALID_ARGUMENT,
                 "--max-context {}: sizes a preset's HCA width; the deployment file {} gives its "
                 "own widths",
                 max_context, name_or_path);
  }
  return load_deployment_file(name_or_path, deployment);
}

std::string problem_text(const smla_problem& p) {
  std::string sources;
  for (int s = 0; s < p.num_sources; ++s) {
    const smla_source_desc& desc = p.sources[s];
    sources += fmt::format("{}p{}w{}", s ? "+" : "", desc.page_size, desc.width);
    if (desc.kind != SMLA_SOURCE_LIST) sources += fmt::format(".{}", source_kind_name(desc.kind));
    if (desc.kind == SMLA_SOURCE_PREFIX) sources += std::to_string(desc.ratio);
  }
  const char* layout = p.kv_layout == SMLA_KV_FP8_PACKED    ? "packed"
                       : p.kv_layout == SMLA_KV_FP8_UNIFORM ? "uniform"
                                                            : "bf16";
  return fmt::format("h{} {} q={} {} qlen{}{}{}", p.num_heads, layout,
                     p.q_dtype == SMLA_BF16 ? "bf16" : "fp8", sources, p.q_len,
                     p.has_sink ? " sink" : "", p.want_lse ? " lse" : "");
}

}  // namespace smla
