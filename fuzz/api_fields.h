// The fields a rejected C API call may name, with the values its message shows for them. The
// API's rule (README.md, runtime/validate.h) is that a rejection names the offending field and
// its value, "problem.sources[1].width = 0: must be in [1, 65536]"; checking that the named
// field exists in the call and holds the shown value catches a message that names the wrong one.
#pragma once

#include <fmt/format.h>
#include <smla.h>

#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace smla::fuzz {

// What one call passed; a null member is an argument passed as NULL.
struct PassedCall {
  const smla_problem* problem = nullptr;
  int max_rows = 0;                       // smla_prepare
  const smla_args* args = nullptr;        // smla_decode, smla_prefill
  const smla_varlen* varlen = nullptr;    // smla_prefill
  size_t cu_entries = 0, kv_entries = 0;  // the entries the varlen arrays really have
  const void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

enum class ApiCall { kPrepare, kDecode, kPrefill };

// A field's value as messages print it: ints and floats as fmt does, enums as their int bits,
// pointers as fmt::ptr ("NULL" is accepted too for a null one).
struct ShownValue {
  std::string text;
  bool null_pointer = false;
};

template <typename T>
ShownValue shown(const T& value) {
  if constexpr (std::is_enum_v<T>) {
    int32_t bits;  // never loaded through the enum type: a C caller can store any int there
    std::memcpy(&bits, &value, sizeof bits);
    return {fmt::format("{}", bits)};
  } else if constexpr (std::is_pointer_v<T>) {
    return {fmt::format("{}", fmt::ptr(value)), value == nullptr};
  } else {
    return {fmt::format("{}", value)};
  }
}

// "args.sources[1].cache" is {"args", "sources", 1, "cache"}; "varlen.kv_lens[3]" is
// {"varlen", "kv_lens", 3, ""}; "max_rows" is {"max_rows"}.
struct FieldPath {
  std::string_view root, field;
  int index = -1;  // -1: none
  std::string_view member;
};

inline std::optional<FieldPath> split_path(std::string_view path) {
  FieldPath p;
  const size_t dot = path.find('.');
  p.root = path.substr(0, dot);
  if (dot == std::string_view::npos) return p;
  std::string_view rest = path.substr(dot + 1);
  const size_t bracket = rest.find('[');
  p.field = rest.substr(0, bracket);
  if (bracket == std::string_view::npos) return p;
  const size_t close = rest.find(']', bracket);
  if (close == std::string_view::npos) return std::nullopt;
  const char* first = rest.data() + bracket + 1;
  const char* last = rest.data() + close;
  if (std::from_chars(first, last, p.index).ptr != last || p.index < 0) return std::nullopt;
  rest = rest.substr(close + 1);
  if (rest.empty()) return p;
  if (rest[0] != '.') return std::nullopt;
  p.member = rest.substr(1);
  return p;
}

inline std::optional<ShownValue> problem_field(const smla_problem* p, const FieldPath& f) {
  if (f.field.empty()) return shown(p);
  if (!p) return std::nullopt;
  if (f.field == "sources" && f.index >= 0 && f.index < SMLA_MAX_SOURCES) {
    const smla_source_desc& s = p->sources[f.index];
    if (f.member == "kind") return shown(s.kind);
    if (f.member == "page_size") return shown(s.page_size);
    if (f.member == "width") return shown(s.width);
    if (f.member == "ratio") return shown(s.ratio);
    return std::nullopt;
  }
  if (f.index >= 0) return std::nullopt;
  if (f.field == "num_heads") return shown(p->num_heads);
  if (f.field == "q_dtype") return shown(p->q_dtype);
  if (f.field == "kv_layout") return shown(p->kv_layout);
  if (f.field == "q_len") return shown(p->q_len);
  if (f.field == "num_sources") return shown(p->num_sources);
  if (f.field == "has_sink") return shown(p->has_sink);
  if (f.field == "want_lse") return shown(p->want_lse);
  return std::nullopt;
}

inline std::optional<ShownValue> args_field(const smla_args* a, const FieldPath& f) {
  if (f.field.empty()) return shown(a);
  if (!a) return std::nullopt;
  if (f.field == "sources" && f.index >= 0 && f.index < SMLA_MAX_SOURCES) {
    const smla_source_args& s = a->sources[f.index];
    if (f.member == "cache") return shown(s.cache);
    if (f.member == "page_stride_bytes") return shown(s.page_stride_bytes);
    if (f.member == "num_pages") return shown(s.num_pages);
    if (f.member == "indices") return shown(s.indices);
    if (f.member == "index_row_stride") return shown(s.index_row_stride);
    if (f.member == "lengths") return shown(s.lengths);
    return std::nullopt;
  }
  if (f.index >= 0) return std::nullopt;
  if (f.field == "num_rows") return shown(a->num_rows);
  if (f.field == "q") return shown(a->q);
  if (f.field == "q_row_stride") return shown(a->q_row_stride);
  if (f.field == "q_head_stride") return shown(a->q_head_stride);
  if (f.field == "q_scale") return shown(a->q_scale);
  if (f.field == "kv_scale") return shown(a->kv_scale);
  if (f.field == "sink") return shown(a->sink);
  if (f.field == "softmax_scale") return shown(a->softmax_scale);
  if (f.field == "out") return shown(a->out);
  if (f.field == "out_row_stride") return shown(a->out_row_stride);
  if (f.field == "out_head_stride") return shown(a->out_head_stride);
  if (f.field == "lse") return shown(a->lse);
  return std::nullopt;
}

// An array entry only where the array really has it, and only through an aligned pointer (the
// harness's array itself): a message showing any other entry read memory it must not have.
inline std::optional<ShownValue> entry(const int32_t* array, size_t entries, int index) {
  if (!array || reinterpret_cast<uintptr_t>(array) % alignof(int32_t) != 0) return std::nullopt;
  if (static_cast<size_t>(index) >= entries) return std::nullopt;
  return shown(array[index]);
}

// `v`: the varlen the call took (decode: NULL).
inline std::optional<ShownValue> varlen_field(const smla_varlen* v, const PassedCall& call,
                                              const FieldPath& f) {
  if (f.field.empty()) return shown(v);
  if (!v || !f.member.empty()) return std::nullopt;
  if (f.field == "num_requests" && f.index < 0) return shown(v->num_requests);
  if (f.field == "cu_seqlens_q") {
    return f.index < 0 ? shown(v->cu_seqlens_q) : entry(v->cu_seqlens_q, call.cu_entries, f.index);
  }
  if (f.field == "kv_lens") {
    return f.index < 0 ? shown(v->kv_lens) : entry(v->kv_lens, call.kv_entries, f.index);
  }
  if (f.index >= 0) return std::nullopt;
  if (f.field == "device_cu_seqlens_q") return shown(v->device_cu_seqlens_q);
  if (f.field == "device_kv_lens") return shown(v->device_kv_lens);
  return std::nullopt;
}

// The value of the field `path` names among the arguments `api` takes, or nullopt when it takes
// no such field.
inline std::optional<ShownValue> field_value(ApiCall api, const PassedCall& call,
                                             std::string_view path) {
  const std::optional<FieldPath> f = split_path(path);
  if (!f) return std::nullopt;
  const bool plain = f->field.empty();
  if (f->root == "problem") return problem_field(call.problem, *f);
  if (api == ApiCall::kPrepare) {
    if (f->root == "max_rows" && plain) return shown(call.max_rows);
    return std::nullopt;
  }
  if (f->root == "args") return args_field(call.args, *f);
  if (f->root == "varlen") {
    return varlen_field(api == ApiCall::kPrefill ? call.varlen : nullptr, call, *f);
  }
  if (f->root == "workspace" && plain) return shown(call.workspace);
  if (f->root == "workspace_bytes" && plain) return shown(call.workspace_bytes);
  return std::nullopt;
}

// Empty when `message` opens with "<field> = <value>" pairs (", "-separated, up to the first
// ": ") that each name a field `api` takes in `call` with the value it holds; else what is wrong.
inline std::string misnamed_fields(const std::string& message, ApiCall api,
                                   const PassedCall& call) {
  const size_t colon = message.find(": ");
  if (colon == std::string::npos) return "no \": \" after the field";
  const std::string_view named(message.data(), colon);
  size_t begin = 0;
  while (begin <= named.size()) {
    size_t end = named.find(", ", begin);
    if (end == std::string_view::npos) end = named.size();
    const std::string_view pair = named.substr(begin, end - begin);
    const size_t equals = pair.find(" = ");
    if (equals == std::string_view::npos)
      return fmt::format("\"{}\" is no \"field = value\"", pair);
    const std::string_view path = pair.substr(0, equals);
    std::string_view value = pair.substr(equals + 3);
    value = value.substr(0, value.find(' '));  // "1 (SMLA_SOURCE_WINDOW)": the number
    const std::optional<ShownValue> field = field_value(api, call, path);
    if (!field) return fmt::format("\"{}\" is no field of this call", path);
    if (value != field->text && !(field->null_pointer && value == "NULL")) {
      return fmt::format("{} shows {}, the call passed {}", path, value, field->text);
    }
    begin = end + 2;
  }
  return "";
}

}  // namespace smla::fuzz
