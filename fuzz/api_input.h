// The bytes of a fuzz_api_validation input and the call they decode into. One description of
// the layout (`io_call`) serves both directions: the fuzzer reads inputs with it and
// fuzz_api_seeds writes the seed corpus with it, so a seed decodes into exactly the call it was
// written from.
#pragma once

#include <smla.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace smla::fuzz {

// Reads fixed-width little-endian fields in order; past the end every field reads as 0, so any
// input decodes into a call.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  template <typename T>
  void field(T* value) {
    static_assert(std::is_trivially_copyable_v<T>);
    unsigned char bytes[sizeof(T)] = {};
    for (size_t i = 0; i < sizeof(T) && offset_ < size_; ++i) bytes[i] = data_[offset_++];
    std::memcpy(value, bytes, sizeof(T));
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t offset_ = 0;
};

// Appends the fields `ByteReader` reads back.
class ByteWriter {
 public:
  template <typename T>
  void field(T* value) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* bytes = reinterpret_cast<const uint8_t*>(value);
    bytes_.insert(bytes_.end(), bytes, bytes + sizeof(T));
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

// A device pointer of the call. A correct library never dereferences one, so the harness passes
// addresses nothing is mapped at: a dereference is a crash the fuzzer records.
struct FakePointer {
  uint8_t kind = 0;  // % 3: 0 NULL, 1 buffer `slot` + `offset`, 2 the address `offset` itself
  uint8_t slot = 0;
  int64_t offset = 0;

  // Buffers 16 GiB apart from 1 TiB up: inside the range ASan keeps inaccessible between its
  // shadow regions (and unmapped in any small process), so that even an uninstrumented read
  // faults.
  static uintptr_t buffer_base(int slot) {
    return (uintptr_t{1} << 40) + (uintptr_t(slot % 16) << 34);
  }
  const void* address() const {
    switch (kind % 3) {
      case 1:
        return reinterpret_cast<const void*>(buffer_base(slot) + static_cast<uintptr_t>(offset));
      case 2:
        return reinterpret_cast<const void*>(static_cast<uintptr_t>(offset));
      default:
        return nullptr;
    }
  }
};

// A host array of smla_varlen: the harness allocates it with exactly the entries the API
// documents, so reading past them is an ASan report.
struct HostArray {
  uint8_t kind = 0;  // % 3: 0 NULL, 1 the array, 2 the array's address plus 1..3 bytes (misaligned)
  uint8_t misalign = 0;
};

// The most requests a varlen input has: its arrays are real and filled from the input.
inline constexpr int kMaxRequests = 1024;

struct SourceInput {
  FakePointer cache;
  int64_t page_stride_bytes = 0;
  int64_t num_pages = 0;
  FakePointer indices;
  int64_t index_row_stride = 0;
  FakePointer lengths;
};

struct ArgsInput {
  int32_t num_rows = 0;
  FakePointer q;
  int64_t q_row_stride = 0, q_head_stride = 0;
  float q_scale = 0;
  SourceInput sources[SMLA_MAX_SOURCES];
  float kv_scale = 0;
  FakePointer sink;
  float softmax_scale = 0;
  FakePointer out;
  int64_t out_row_stride = 0, out_head_stride = 0;
  FakePointer lse;
};

struct VarlenInput {
  int32_t num_requests = 0;  // as passed, except that more than kMaxRequests is clamped to it
  HostArray cu_seqlens_q, kv_lens;
  std::vector<int32_t> cu_values, kv_values;  // what the arrays hold (documented sizes)
  FakePointer device_cu_seqlens_q, device_kv_lens;
};

// Bit `i` of `null_arguments` passes NULL for the problem (0), the args (1) or the varlen (2).
struct ApiInput {
  uint8_t context = 0;  // an index into the harness's contexts (modulo their count)
  uint8_t null_arguments = 0;
  smla_problem problem{};
  int32_t max_rows = 0;
  ArgsInput args;
  FakePointer workspace;
  uint64_t workspace_bytes = 0;
  VarlenInput varlen;
};

// The entries smla_varlen documents for `num_requests` (cu_seqlens_q has one more).
inline size_t documented_entries(int32_t num_requests, bool cu_seqlens) {
  if (num_requests < 0) return 0;
  return static_cast<size_t>(num_requests) + (cu_seqlens ? 1 : 0);
}

template <typename Io>
void io_pointer(Io& io, FakePointer* p) {
  io.field(&p->kind);
  io.field(&p->slot);
  io.field(&p->offset);
}

template <typename Io>
void io_problem(Io& io, smla_problem* p) {
  // Enum fields travel as their int bits: a C caller can store any int there.
  io.field(&p->num_heads);
  io.field(&p->q_dtype);
  io.field(&p->kv_layout);
  io.field(&p->q_len);
  io.field(&p->num_sources);
  for (smla_source_desc& source : p->sources) {
    io.field(&source.kind);
    io.field(&source.page_size);
    io.field(&source.width);
  }
  io.field(&p->has_sink);
  io.field(&p->want_lse);
}

template <typename Io>
void io_args(Io& io, ArgsInput* a) {
  io.field(&a->num_rows);
  io_pointer(io, &a->q);
  io.field(&a->q_row_stride);
  io.field(&a->q_head_stride);
  io.field(&a->q_scale);
  for (SourceInput& s : a->sources) {
    io_pointer(io, &s.cache);
    io.field(&s.page_stride_bytes);
    io.field(&s.num_pages);
    io_pointer(io, &s.indices);
    io.field(&s.index_row_stride);
    io_pointer(io, &s.lengths);
  }
  io.field(&a->kv_scale);
  io_pointer(io, &a->sink);
  io.field(&a->softmax_scale);
  io_pointer(io, &a->out);
  io.field(&a->out_row_stride);
  io.field(&a->out_head_stride);
  io_pointer(io, &a->lse);
}

template <typename Io>
void io_varlen(Io& io, VarlenInput* v) {
  io.field(&v->num_requests);
  if (v->num_requests > kMaxRequests) v->num_requests = kMaxRequests;
  io.field(&v->cu_seqlens_q.kind);
  io.field(&v->cu_seqlens_q.misalign);
  io.field(&v->kv_lens.kind);
  io.field(&v->kv_lens.misalign);
  v->cu_values.resize(documented_entries(v->num_requests, true));
  v->kv_values.resize(documented_entries(v->num_requests, false));
  for (int32_t& value : v->cu_values) io.field(&value);
  for (int32_t& value : v->kv_values) io.field(&value);
}

template <typename Io>
void io_call(Io& io, ApiInput* in) {
  io.field(&in->context);
  io.field(&in->null_arguments);
  io_problem(io, &in->problem);
  io.field(&in->max_rows);
  io_args(io, &in->args);
  io_pointer(io, &in->workspace);
  io.field(&in->workspace_bytes);
  io_varlen(io, &in->varlen);
  // Fields added after the first corpus, last, so that its seeds still decode as written.
  for (smla_source_desc& source : in->problem.sources) io.field(&source.ratio);
  io_pointer(io, &in->varlen.device_cu_seqlens_q);
  io_pointer(io, &in->varlen.device_kv_lens);
}

}  // namespace smla::fuzz
