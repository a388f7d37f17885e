#include "runtime/validate.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "codegen/arch.h"

namespace smla {
namespace {

constexpr int64_t kHeadDim = SMLA_HEAD_DIM;
constexpr const char* kLayoutNames[] = {"SMLA_KV_FP8_UNIFORM", "SMLA_KV_FP8_PACKED",
                                        "SMLA_KV_BF16"};
// Longest prefix of a bad options.arch quoted in a message; also bounds what is read of it.
constexpr size_t kMaxQuotedChars = 32;

// A field's name, written into a message only when one is reported: validation runs on every
// call, and a call that passes allocates nothing. "args.sources[1].cache" is {"args.sources", 1,
// "cache"}; "args.num_rows" is {"args.num_rows"}.
struct FieldName {
  std::string_view base;
  int index = -1;                              // -1: none
  std::string_view member;                     // after the index; may be empty
  FieldName(const char* name) : base(name) {}  // NOLINT: a plain name converts implicitly
  FieldName(std::string_view base, int index, std::string_view member = {})
      : base(base), index(index), member(member) {}
  FieldName operator/(std::string_view field) const { return {base, index, field}; }
};

}  // namespace
}  // namespace smla

template <>
struct fmt::formatter<smla::FieldName> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(const smla::FieldName& name, Context& ctx) const {
    auto out = fmt::format_to(ctx.out(), "{}", name.base);
    if (name.index >= 0) out = fmt::format_to(out, "[{}]", name.index);
    if (!name.member.empty()) out = fmt::format_to(out, ".{}", name.member);
    return out;
  }
};

namespace smla {
namespace {

template <typename... Args>
Status invalid(fmt::format_string<Args...> format, Args&&... args) {
  return error(SMLA_ERR_INVALID_ARGUMENT, format, std::forward<Args>(args)...);
}

// The int that C stored in an enum field. NOTE: loading an out-of-range value through the C++
// enum type is undefined behaviour (clang's -fsanitize=enum traps on it), and a C caller can
// store any int there, so the bits are copied out instead.
template <typename Enum>
int32_t enum_bits(const Enum& field) {
  static_assert(sizeof(Enum) == sizeof(int32_t), "C enums are int-sized on supported ABIs");
  int32_t bits;
  std::memcpy(&bits, &field, sizeof bits);
  return bits;
}

Status check_range(const FieldName& name, int64_t value, int64_t lo, int64_t hi) {
  if (value < lo || value > hi) return invalid("{} = {}: must be in [{}, {}]", name, value, lo, hi);
  return ok_status();
}

Status check_flag(const FieldName& name, int value) {
  if (value != 0 && value != 1) return invalid("{} = {}: must be 0 or 1", name, value);
  return ok_status();
}

Status check_scale(const FieldName& name, float value, std::string_view why) {
  if (!std::isfinite(value) || value <= 0.0f) {
    return invalid("{} = {}: must be finite and > 0{}", name, value, why);
  }
  return ok_status();
}

bool is_aligned(const void* pointer, uintptr_t alignment) {
  return reinterpret_cast<uintptr_t>(pointer) % alignment == 0;
}

// NULL passes: for optional pointers.
Status check_aligned(const void* pointer, const FieldName& name, uintptr_t alignment) {
  if (!is_aligned(pointer, alignment)) {
    return invalid("{} = {}: must be {}-byte aligned", name, fmt::ptr(pointer), alignment);
  }
  return ok_status();
}

Status check_required(const void* pointer, const FieldName& name, uintptr_t alignment,
                      const FieldName& required_when) {
  if (!pointer) return invalid("{} = NULL: required when {}", name, required_when);
  return check_aligned(pointer, name, alignment);
}

// The scales that apply, multiplied (and by log2 e, as the kernels take them), must stay finite
// in float. (One that underflows is fine: softmax of scores that small is uniform anyway.)
Status check_score_scale(const smla_problem& problem, const smla_args& args) {
  if (score_scale(problem, args) * M_LOG2E <= FLT_MAX) return ok_status();
  std::string scales = fmt::format("args.softmax_scale = {}", args.softmax_scale);
  if (problem.q_dtype == SMLA_FP8_E4M3) scales += fmt::format(", args.q_scale = {}", args.q_scale);
  if (problem.kv_layout == SMLA_KV_FP8_UNIFORM) {
    scales += fmt::format(", args.kv_scale = {}", args.kv_scale);
  }
  return invalid("{}: the scales that apply, multiplied, overflow float", scales);
}

// An array a call reads or writes, over the bytes validate_args lets it touch.
struct CallArray {
  int source;         // -1: a field of args itself; kVarlenArray: of varlen
  const char* field;  // "q", or "cache" of args.sources[source]
  const void* base;
  int64_t bytes;
  bool written;
  static constexpr int kVarlenArray = -2;
  std::string name() const {
    if (source == kVarlenArray) return fmt::format("varlen.{}", field);
    return source < 0 ? fmt::format("args.{}", field)
                      : fmt::format("args.sources[{}].{}", source, field);
  }
  uintptr_t begin() const { return reinterpret_cast<uintptr_t>(base); }
};

bool is_structured(const smla_source_desc& desc) { return desc.kind != SMLA_SOURCE_LIST; }

// The first window or prefix source, or -1.
int first_structured_source(const smla_problem& problem) {
  for (int s = 0; s < problem.num_sources; ++s) {
    if (is_structured(problem.sources[s])) return s;
  }
  return -1;
}

const char* kind_name(const smla_source_desc& desc) {
  return desc.kind == SMLA_SOURCE_WINDOW ? "SMLA_SOURCE_WINDOW" : "SMLA_SOURCE_PREFIX";
}

// Every array of a call with a non-zero extent; for a valid problem and args with rows > 0
// whose strides are >= 0 and extents fit int64 (validate_args), and a valid `varlen` where a
// source is structured. No allocation.
class CallArrays {
 public:
  CallArrays(const smla_problem& problem, const smla_args& args, const smla_varlen* varlen) {
    const int64_t rows = args.num_rows, heads = problem.num_heads;
    const auto vectors_bytes = [&](int64_t row_stride, int64_t head_stride, int elem_bytes) {
      return ((rows - 1) * row_stride + (heads - 1) * head_stride + kHeadDim) * elem_bytes;
    };
    add({-1, "q", args.q,
         vectors_bytes(args.q_row_stride, args.q_head_stride,
                       problem.q_dtype == SMLA_FP8_E4M3 ? 1 : 2),
         false});
    add({-1, "out", args.out, vectors_bytes(args.out_row_stride, args.out_head_stride, 2), true});
    if (problem.want_lse) add({-1, "lse", args.lse, rows * heads * 4, true});
    if (problem.has_sink) add({-1, "sink", args.sink, heads * 4, false});
    for (int s = 0; s < problem.num_sources; ++s) {
      const smla_source_args& src = args.sources[s];
      // The last page ends at its own bytes, not at the stride: pages of two sources (or
      // layers) may interleave in one pool, and what follows the pool is not the call's.
      const int64_t page_bytes =
          smla_min_page_stride(problem.kv_layout, problem.sources[s].page_size);
      add({s, "cache", src.cache,
           src.num_pages > 0 ? (src.num_pages - 1) * src.page_stride_bytes + page_bytes : 0,
           false});
      const int64_t table_bytes =
          is_structured(problem.sources[s])
              ? int64_t{varlen->num_requests} * src.index_row_stride * 4
              : ((rows - 1) * src.index_row_stride + problem.sources[s].width) * 4;
      add({s, "indices", src.indices, table_bytes, false});
      if (src.lengths) add({s, "lengths", src.lengths, rows * 4, false});
    }
    if (first_structured_source(problem) >= 0) {
      const int64_t requests = varlen->num_requests;
      add({CallArray::kVarlenArray, "device_cu_seqlens_q", varlen->device_cu_seqlens_q,
           (requests + 1) * 4, false});
      add({CallArray::kVarlenArray, "device_kv_lens", varlen->device_kv_lens, requests * 4, false});
    }
  }
  const CallArray* begin() const { return arrays_; }
  const CallArray* end() const { return arrays_ + count_; }

 private:
  void add(const CallArray& array) {
    if (array.bytes > 0) arrays_[count_++] = array;
  }
  CallArray arrays_[6 + 3 * SMLA_MAX_SOURCES];
  int count_ = 0;
};

bool overlap(const CallArray& a, const CallArray& b) {
  return a.begin() < b.begin() + static_cast<uintptr_t>(b.bytes) &&
         b.begin() < a.begin() + static_cast<uintptr_t>(a.bytes);
}

// An extent to or past the end of the address space would wrap the overlap checks' arithmetic.
Status check_no_wrap(const CallArray& array) {
  if (static_cast<uintptr_t>(array.bytes) > UINTPTR_MAX - array.begin()) {
    return invalid("{} = {}: its {} bytes run past the end of the address space", array.name(),
                   array.base, array.bytes);
  }
  return ok_status();
}

// One dimension of a [num_rows][num_heads][512] array: its stride in elements and extent.
struct Dim {
  std::string_view name;
  int64_t stride;
  int64_t count;
};

// Checks args.q or args.out: `base` is the array, element size `elem_bytes`, head vectors of 512
// contiguous elements. A dimension of extent 1 is never stepped along, so its stride is free
// (but never negative).
Status check_vectors(const char* name, const void* base, int elem_bytes, Dim a, Dim b) {
  SMLA_TRY(check_required(base, name, 16, "num_rows > 0"));
  const int64_t elems_per_16_bytes = 16 / elem_bytes;
  for (const Dim* dim : {&a, &b}) {
    if (dim->stride < 0) return invalid("{} = {}: must be >= 0", dim->name, dim->stride);
    if (dim->count > 1 && dim->stride % elems_per_16_bytes != 0) {
      return invalid(
          "{} = {}: must be a multiple of {} elements so that every head vector of {} "
          "starts 16-byte aligned",
          dim->name, dim->stride, elems_per_16_bytes, name);
    }
  }
  const __int128 extent_elems = static_cast<__int128>(a.count - 1) * a.stride +
                                static_cast<__int128>(b.count - 1) * b.stride + kHeadDim;
  if (extent_elems * elem_bytes > INT64_MAX) {
    return invalid("{} = {}, {} = {}: the extent of {} in bytes overflows int64", a.name, a.stride,
                   b.name, b.stride, name);
  }
  // NOTE: sufficient, not necessary: the inner (smaller-stride) vectors must fit in one step of
  // the outer stride. Interleaved layouts that happen not to overlap are rejected too; no
  // framework produces them for q or out. A dimension of extent 1 needs no case of its own: as
  // the inner one it only asks the outer stride for 512, as the outer one it is not checked.
  if (a.stride > b.stride) std::swap(a, b);
  if (a.count > 1 && a.stride < kHeadDim) {
    return invalid(
        "{} = {}: must be >= {} so that the {} head vectors of {} along it do not "
        "overlap",
        a.name, a.stride, kHeadDim, a.count, name);
  }
  const __int128 outer_needed = static_cast<__int128>(a.stride) * (a.count - 1) + kHeadDim;
  if (b.count > 1 && b.stride < outer_needed) {
    const auto needed = static_cast<int64_t>(outer_needed);  // <= extent, checked above
    return invalid(
        "{} = {}: must be >= {} ({} = {} times {}, plus {}) so that the head vectors "
        "of {} do not overlap",
        b.name, b.stride, needed, a.name, a.stride, a.count - 1, kHeadDim, name);
  }
  return ok_status();
}

// The host arrays of a varlen description with rows > 0 (and the device copies where a source
// is structured).
Status check_varlen(const smla_problem& problem, const smla_args& args, const smla_varlen& varlen) {
  const int64_t requests = varlen.num_requests;
  if (requests < 1) {
    return invalid("varlen.num_requests = {}: must be >= 1 when num_rows > 0", requests);
  }
  if (requests > args.num_rows) {
    return invalid("varlen.num_requests = {}: must be <= args.num_rows = {}", requests,
                   args.num_rows);
  }
  const int32_t* cu = varlen.cu_seqlens_q;
  SMLA_TRY(check_required(cu, "varlen.cu_seqlens_q", 4, "num_rows > 0"));
  if (cu[0] != 0) return invalid("varlen.cu_seqlens_q[0] = {}: must be 0", cu[0]);
  for (int64_t i = 1; i <= requests; ++i) {
    if (cu[i] < cu[i - 1]) {
      return invalid("varlen.cu_seqlens_q[{}] = {}: must be >= varlen.cu_seqlens_q[{}] = {}", i,
                     cu[i], i - 1, cu[i - 1]);
    }
  }
  if (cu[requests] != args.num_rows) {
    return invalid("varlen.cu_seqlens_q[{}] = {}: must equal args.num_rows = {}", requests,
                   cu[requests], args.num_rows);
  }
  SMLA_TRY(check_required(varlen.kv_lens, "varlen.kv_lens", 4, "num_rows > 0"));
  for (int64_t i = 0; i < requests; ++i) {
    const int32_t rows = cu[i + 1] - cu[i];
    if (varlen.kv_lens[i] < rows) {
      return invalid(
          "varlen.kv_lens[{}] = {}: must be >= the request's {} rows "
          "(varlen.cu_seqlens_q[{}] - varlen.cu_seqlens_q[{}])",
          i, varlen.kv_lens[i], rows, i + 1, i);
    }
  }
  const int structured = first_structured_source(problem);
  if (structured < 0) return ok_status();
  const std::string why = fmt::format("problem.sources[{}].kind is {}", structured,
                                      kind_name(problem.sources[structured]));
  SMLA_TRY(
      check_required(varlen.device_cu_seqlens_q, "varlen.device_cu_seqlens_q", 4, why.c_str()));
  return check_required(varlen.device_kv_lens, "varlen.device_kv_lens", 4, why.c_str());
}

// The block table of a window or prefix source: no lengths, and for every request with rows the
// columns its rows read (their tokens' pages), which a prefix must also hold within its width.
// `varlen` is valid.
Status check_block_table(const smla_problem& problem, int s, const smla_source_args& source,
                         const smla_varlen& varlen) {
  const FieldName prefix("args.sources", s);
  const smla_source_desc& desc = problem.sources[s];
  if (source.lengths) {
    return invalid(
        "{}.lengths = {}: must be NULL for a {} source (its lengths follow from the "
        "rows' positions)",
        prefix, fmt::ptr(source.lengths), kind_name(desc));
  }
  if (source.index_row_stride < 1) {
    return invalid("{}.index_row_stride = {}: must be >= 1 (block-table columns)", prefix,
                   source.index_row_stride);
  }
  // NOTE: the kernels form a structured source's physical indices in 32-bit arithmetic.
  if (static_cast<__int128>(source.num_pages) * desc.page_size > INT32_MAX) {
    return invalid(
        "{}.num_pages = {}: {} pages of {} tokens exceed the 2^31 - 1 indices a {} "
        "source can address",
        prefix, source.num_pages, source.num_pages, desc.page_size, kind_name(desc));
  }
  // NOTE: the kernels address a block table's rows in tokens, in 32-bit arithmetic.
  if (static_cast<__int128>(varlen.num_requests) * source.index_row_stride * desc.page_size >
      INT32_MAX) {
    return invalid(
        "{}.index_row_stride = {}: {} requests of {} columns of {}-token pages exceed "
        "the 2^31 - 1 tokens a block table can address",
        prefix, source.index_row_stride, varlen.num_requests, source.index_row_stride,
        desc.page_size);
  }
  for (int b = 0; b < varlen.num_requests; ++b) {
    const int64_t rows = varlen.cu_seqlens_q[b + 1] - varlen.cu_seqlens_q[b];
    if (rows == 0) continue;
    const int64_t tokens = varlen.kv_lens[b];  // the last row's causal length
    int64_t entries = tokens;                  // a window reads up to token tokens - 1
    if (desc.kind == SMLA_SOURCE_PREFIX) {
      entries = tokens / desc.ratio;
      if (entries > desc.width) {
        return invalid(
            "varlen.kv_lens[{}] = {}: its last row attends {} entries of ratio {}, "
            "more than problem.sources[{}].width = {}",
            b, tokens, entries, desc.ratio, s, desc.width);
      }
    }
    const int64_t columns = (entries + desc.page_size - 1) / desc.page_size;
    if (columns > source.index_row_stride) {
      return invalid(
          "{}.index_row_stride = {}: request {} (varlen.kv_lens[{}] = {}) reads {} "
          "block-table columns (pages of {})",
          prefix, source.index_row_stride, b, b, tokens, columns, desc.page_size);
    }
  }
  return ok_status();
}

Status check_source(const smla_problem& problem, int s, const smla_source_args& source,
                    int num_rows, const smla_varlen* varlen) {
  const FieldName prefix("args.sources", s);
  const smla_source_desc& desc = problem.sources[s];
  if (source.num_pages < 0) {
    return invalid("{}.num_pages = {}: must be >= 0", prefix, source.num_pages);
  }
  // NOTE: with no pages every index is skipped and the cache is never read; frameworks hand out
  // NULL for empty tensors (torch's data_ptr() of a 0-element tensor), so NULL is accepted then.
  if (source.num_pages > 0) {
    SMLA_TRY(check_required(source.cache, prefix / "cache", 16, prefix / "num_pages > 0"));
  } else {
    SMLA_TRY(check_aligned(source.cache, prefix / "cache", 16));
  }
  const int64_t min_stride = smla_min_page_stride(problem.kv_layout, desc.page_size);
  if (source.page_stride_bytes < min_stride) {
    return invalid("{}.page_stride_bytes = {}: must be >= {} (a page of {} tokens of {})", prefix,
                   source.page_stride_bytes, min_stride, desc.page_size,
                   kLayoutNames[problem.kv_layout]);
  }
  if (source.page_stride_bytes % 16 != 0) {
    return invalid("{}.page_stride_bytes = {}: must be a multiple of 16", prefix,
                   source.page_stride_bytes);
  }
  if (static_cast<__int128>(source.num_pages) * source.page_stride_bytes > INT64_MAX) {
    return invalid("{}.num_pages = {}: {} pages of {} bytes overflow int64 bytes", prefix,
                   source.num_pages, source.num_pages, source.page_stride_bytes);
  }
  SMLA_TRY(check_required(source.indices, prefix / "indices", 4, "num_rows > 0"));
  if (is_structured(desc)) return check_block_table(problem, s, source, *varlen);
  if (source.index_row_stride < desc.width) {
    return invalid("{}.index_row_stride = {}: must be >= problem.sources[{}].width = {}", prefix,
                   source.index_row_stride, s, desc.width);
  }
  const __int128 table_bytes =
      (static_cast<__int128>(num_rows - 1) * source.index_row_stride + desc.width) *
      static_cast<__int128>(sizeof(int32_t));
  if (table_bytes > INT64_MAX) {
    return invalid("{}.index_row_stride = {}: a table of {} rows overflows int64 bytes", prefix,
                   source.index_row_stride, num_rows);
  }
  return check_aligned(source.lengths, prefix / "lengths", 4);
}

}  // namespace

Status validate_options(const smla_options* options) {
  if (!options) return ok_status();
  if (options->device < 0) return invalid("options.device = {}: must be >= 0", options->device);
  const int32_t jit = enum_bits(options->jit);
  if (jit != SMLA_JIT_ALLOW && jit != SMLA_JIT_FORBID) {
    return invalid("options.jit = {}: must be SMLA_JIT_ALLOW (0) or SMLA_JIT_FORBID (1)", jit);
  }
  const int32_t log_level = enum_bits(options->log_level);
  if (log_level < SMLA_LOG_ERROR || log_level > SMLA_LOG_DEBUG) {
    return invalid("options.log_level = {}: must be in [SMLA_LOG_ERROR (0), SMLA_LOG_DEBUG (3)]",
                   log_level);
  }
  if (options->batch_variant != 0 && options->batch_variant != 1) {
    return invalid("options.batch_variant = {}: must be 0 or 1", options->batch_variant);
  }
  if (!options->arch) return ok_status();
  const std::string_view quoted(options->arch, strnlen(options->arch, kMaxQuotedChars));
  if (quoted.size() < kMaxQuotedChars && find_arch(std::string(quoted))) return ok_status();
  return invalid("options.arch = {:?}: must be NULL or one of {}", quoted, arch_names());
}

Status validate_problem(const smla_problem* problem) {
  if (!problem) return invalid("problem = NULL: required");
  SMLA_TRY(check_range("problem.num_heads", problem->num_heads, 1, SMLA_MAX_HEADS));
  const int32_t q_dtype = enum_bits(problem->q_dtype);
  if (q_dtype != SMLA_BF16 && q_dtype != SMLA_FP8_E4M3) {
    return invalid("problem.q_dtype = {}: must be SMLA_BF16 (0) or SMLA_FP8_E4M3 (1)", q_dtype);
  }
  const int32_t kv_layout = enum_bits(problem->kv_layout);
  if (kv_layout < SMLA_KV_FP8_UNIFORM || kv_layout > SMLA_KV_BF16) {
    return invalid(
        "problem.kv_layout = {}: must be SMLA_KV_FP8_UNIFORM (0), SMLA_KV_FP8_PACKED "
        "(1) or SMLA_KV_BF16 (2)",
        kv_layout);
  }
  SMLA_TRY(check_range("problem.q_len", problem->q_len, 1, SMLA_MAX_Q_LEN));
  SMLA_TRY(check_range("problem.num_sources", problem->num_sources, 1, SMLA_MAX_SOURCES));
  for (int s = 0; s < problem->num_sources; ++s) {
    const smla_source_desc& source = problem->sources[s];
    const FieldName prefix("problem.sources", s);
    if (source.page_size < 1) {
      return invalid("{}.page_size = {}: must be >= 1", prefix, source.page_size);
    }
    SMLA_TRY(check_range(prefix / "width", source.width, 1, SMLA_MAX_WIDTH));
    const int32_t kind = enum_bits(source.kind);
    if (kind < SMLA_SOURCE_LIST || kind > SMLA_SOURCE_PREFIX) {
      return invalid(
          "{}.kind = {}: must be SMLA_SOURCE_LIST (0), SMLA_SOURCE_WINDOW (1) or "
          "SMLA_SOURCE_PREFIX (2)",
          prefix, kind);
    }
    if (kind == SMLA_SOURCE_PREFIX) {
      SMLA_TRY(check_range(prefix / "ratio", source.ratio, 1, SMLA_MAX_WIDTH));
    } else if (source.ratio != 0) {
      return invalid("{}.ratio = {}: must be 0 unless the source is a prefix", prefix,
                     source.ratio);
    }
  }
  SMLA_TRY(check_flag("problem.has_sink", problem->has_sink));
  SMLA_TRY(check_flag("problem.want_lse", problem->want_lse));
  // Only now, so that an invalid problem is never reported as merely unsupported.
  for (int s = 0; s < problem->num_sources; ++s) {
    // NOTE: the kernels address a token inside its page in 32-bit arithmetic.
    const int page_size = problem->sources[s].page_size;
    const int64_t page_bytes = smla_min_page_stride(problem->kv_layout, page_size);
    if (page_bytes > INT32_MAX) {
      return error(SMLA_ERR_UNSUPPORTED,
                   "problem.sources[{}].page_size = {}: pages of {} bytes; pages must be smaller "
                   "than 2 GiB",
                   s, page_size, page_bytes);
    }
  }
  return ok_status();
}

Status validate_max_rows(int max_rows) { return check_range("max_rows", max_rows, 1, kMaxRows); }

Status validate_args(const smla_problem& problem, const smla_args* args,
                     const smla_varlen* varlen) {
  if (!args) return invalid("args = NULL: required");
  SMLA_TRY(check_range("args.num_rows", args->num_rows, 0, kMaxRows));
  const int rows = args->num_rows;
  if (rows == 0) return ok_status();
  const int structured = first_structured_source(problem);
  const int heads = problem.num_heads;
  const bool fp8_q = problem.q_dtype == SMLA_FP8_E4M3;
  SMLA_TRY(check_vectors("args.q", args->q, fp8_q ? 1 : 2,
                         {"args.q_row_stride", args->q_row_stride, rows},
                         {"args.q_head_stride", args->q_head_stride, heads}));
  if (fp8_q) {
    SMLA_TRY(check_scale("args.q_scale", args->q_scale, " (problem.q_dtype is SMLA_FP8_E4M3)"));
  }
  for (int s = 0; s < problem.num_sources; ++s) {
    // A block table is checked against the varlen description, so that is checked first; a
    // call of list sources checks it last, after every argument.
    if (s == structured) {
      if (!varlen) {
        return invalid("varlen = NULL: required when problem.sources[{}].kind is {}", s,
                       kind_name(problem.sources[s]));
      }
      SMLA_TRY(check_varlen(problem, *args, *varlen));
    }
    SMLA_TRY(check_source(problem, s, args->sources[s], rows, varlen));
  }
  if (problem.kv_layout == SMLA_KV_FP8_UNIFORM) {
    SMLA_TRY(check_scale("args.kv_scale", args->kv_scale,
                         " (problem.kv_layout is SMLA_KV_FP8_UNIFORM)"));
  }
  if (problem.has_sink) {
    SMLA_TRY(check_required(args->sink, "args.sink", 4, "problem.has_sink = 1"));
  }
  SMLA_TRY(check_scale("args.softmax_scale", args->softmax_scale, ""));
  SMLA_TRY(check_score_scale(problem, *args));
  SMLA_TRY(check_vectors("args.out", args->out, 2,
                         {"args.out_row_stride", args->out_row_stride, rows},
                         {"args.out_head_stride", args->out_head_stride, heads}));
  if (problem.want_lse) {
    SMLA_TRY(check_required(args->lse, "args.lse", 4, "problem.want_lse = 1"));
  }
  // The outputs must not land on what the call reads, nor on each other: CTAs still reading an
  // input would see another's results.
  CallArrays arrays(problem, *args, varlen);
  for (const CallArray& array : arrays) SMLA_TRY(check_no_wrap(array));
  for (const CallArray& written : arrays) {
    if (!written.written) continue;
    for (const CallArray& other : arrays) {
      if (&other != &written && overlap(written, other)) {
        return invalid("{} = {}: its {} bytes overlap {} ({} bytes at {})", written.name(),
                       written.base, written.bytes, other.name(), other.bytes, other.base);
      }
    }
  }
  if (varlen && structured < 0) SMLA_TRY(check_varlen(problem, *args, *varlen));
  return ok_status();
}

double score_scale(const smla_problem& problem, const smla_args& args) {
  const double q_scale = problem.q_dtype == SMLA_FP8_E4M3 ? args.q_scale : 1.0;
  const double kv_scale = problem.kv_layout == SMLA_KV_FP8_UNIFORM ? args.kv_scale : 1.0;
  return static_cast<double>(args.softmax_scale) * q_scale * kv_scale;
}

Status validate_workspace_overlap(const smla_problem& problem, const smla_args& args,
                                  const void* workspace, size_t used_bytes,
                                  const smla_varlen* varlen) {
  if (used_bytes == 0 || args.num_rows == 0) return ok_status();
  // NOTE: on every split call's path, so nothing is allocated unless there is an error.
  const CallArray partials{-1, "workspace", workspace, static_cast<int64_t>(used_bytes), true};
  for (const CallArray& array : CallArrays(problem, args, varlen)) {
    if (overlap(partials, array)) {
      return invalid(
          "workspace = {}: the {} bytes this call writes there overlap {} ({} bytes at {})",
          workspace, used_bytes, array.name(), array.bytes, array.base);
    }
  }
  return ok_status();
}

Status require_varlen(const smla_varlen* varlen) {
  if (!varlen) return invalid("varlen = NULL: required");
  return ok_status();
}

Status validate_workspace(const void* workspace, size_t bytes) {
  if (!workspace && bytes > 0) {
    return invalid("workspace = NULL: required when workspace_bytes = {} > 0", bytes);
  }
  if (bytes > UINTPTR_MAX - reinterpret_cast<uintptr_t>(workspace)) {
    return invalid("workspace = {}, workspace_bytes = {}: past the end of the address space",
                   workspace, bytes);
  }
  return check_aligned(workspace, "workspace", 16);
}

}  // namespace smla
