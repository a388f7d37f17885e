#include "harness/device_case.h"

#include <cstring>
#include <limits>

namespace smla {
namespace {

constexpr size_t kAlignment = 256;

size_t align(size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

}  // namespace

Status status_of(smla_status code) {
  if (code == SMLA_OK) return ok_status();
  return Status(code, std::string(smla_status_string(code)) + ": " + smla_last_error());
}

Status DeviceCase::upload(const DeviceSession& session, const ref::HostCase& host,
                          const DeviceCaseOptions& options, DeviceCase* result) {
  DeviceCase dc;
  dc.host_ = &host;
  dc.args_ = host.host_args();
  const size_t guard = align(options.guard_bytes);
  auto add = [&](size_t bytes, const void* data, size_t guard_bytes,
                 const void** device) -> Status {
    DeviceBuffer buffer;
    SMLA_TRY(session.allocate(bytes + 2 * guard_bytes, &buffer));
    if (guard_bytes > 0) SMLA_TRY(buffer.fill(0xFF));
    if (data != nullptr) SMLA_TRY(buffer.upload(data, bytes, guard_bytes));
    *device = static_cast<const char*>(buffer.get()) + guard_bytes;
    dc.buffers_.push_back(std::move(buffer));
    return ok_status();
  };
  const void* pointer = nullptr;
  SMLA_TRY(add(host.q.size(), host.q.data(), 0, &pointer));
  dc.args_.q = pointer;
  for (int s = 0; s < host.problem.num_sources; ++s) {
    const ref::HostSource& src = host.sources[s];
    pointer = nullptr;  // a source without pages passes no cache, as a server may
    if (!src.cache.empty()) SMLA_TRY(add(src.cache.size(), src.cache.data(), guard, &pointer));
    dc.args_.sources[s].cache = pointer;
    dc.index_buffer_[s] = dc.buffers_.size();
    SMLA_TRY(add(src.indices.size() * 4, src.indices.data(), 0, &pointer));
    dc.args_.sources[s].indices = static_cast<const int32_t*>(pointer);
    if (!src.lengths.empty()) {
      dc.length_buffer_[s] = dc.buffers_.size();
      SMLA_TRY(add(src.lengths.size() * 4, src.lengths.data(), 0, &pointer));
      dc.args_.sources[s].lengths = static_cast<const int32_t*>(pointer);
    }
  }
  dc.varlen_ = host.host_varlen();
  if (dc.varlen_.num_requests > 0) {
    SMLA_TRY(add(host.cu_seqlens_q.size() * 4, host.cu_seqlens_q.data(), 0, &pointer));
    dc.varlen_.device_cu_seqlens_q = static_cast<const int32_t*>(pointer);
    SMLA_TRY(add(host.kv_lens.size() * 4, host.kv_lens.data(), 0, &pointer));
    dc.varlen_.device_kv_lens = static_cast<const int32_t*>(pointer);
  }
  if (!host.sink.empty()) {
    SMLA_TRY(add(host.sink.size() * 4, host.sink.data(), 0, &pointer));
    dc.args_.sink = static_cast<const float*>(pointer);
  }
  const size_t elements =
      static_cast<size_t>(host.num_rows) * host.problem.num_heads * SMLA_HEAD_DIM;
  dc.out_index_ = dc.buffers_.size();
  SMLA_TRY(add(elements * 2, nullptr, 0, &pointer));
  dc.args_.out = const_cast<void*>(pointer);
  if (host.problem.want_lse) {
    dc.lse_index_ = dc.buffers_.size();
    SMLA_TRY(
        add(static_cast<size_t>(host.num_rows) * host.problem.num_heads * 4, nullptr, 0, &pointer));
    dc.args_.lse = static_cast<float*>(const_cast<void*>(pointer));
  }
  *result = std::move(dc);
  return ok_status();
}

Status DeviceCase::poison_outputs() const {
  SMLA_TRY(buffers_[out_index_].fill(0xFF));
  if (host_->problem.want_lse) SMLA_TRY(buffers_[lse_index_].fill(0xFF));
  return ok_status();
}

Status DeviceCase::download(std::vector<uint16_t>* out, std::vector<float>* lse) const {
  out->resize(buffers_[out_index_].size() / 2);
  SMLA_TRY(buffers_[out_index_].download(out->data(), out->size() * 2));
  lse->clear();
  if (host_->problem.want_lse) {
    lse->resize(buffers_[lse_index_].size() / 4);
    SMLA_TRY(buffers_[lse_index_].download(lse->data(), lse->size() * 4));
  }
  return ok_status();
}

Status DeviceCase::upload_indices(int source, const std::vector<int32_t>& indices) const {
  return buffers_[index_buffer_[source]].upload(indices.data(), indices.size() * 4);
}

Status DeviceCase::upload_lengths(int source, const std::vector<int32_t>& lengths) const {
  if (length_buffer_[source] == 0)
    return error(SMLA_ERR_INTERNAL, "source {} has no lengths", source);
  return buffers_[length_buffer_[source]].upload(lengths.data(), lengths.size() * 4);
}

CheckResult run_and_compare(smla_context* ctx, const DeviceSession& session, const DeviceCase& dc,
                            const ref::ReferenceResult& reference, CUstream stream,
                            CallEntry entry) {
  CheckResult r;
  const smla_problem& problem = dc.host().problem;
  size_t workspace_bytes = 0;
  r.status = status_of(smla_prepare(ctx, &problem, dc.host().num_rows > 0 ? dc.host().num_rows : 1,
                                    &workspace_bytes));
  if (!r.status) return r;
  DeviceBuffer workspace;
  r.status = session.allocate(workspace_bytes, &workspace);
  if (!r.status) return r;
  if (workspace_bytes > 0) {
    r.status = workspace.fill(0xFF);  // nothing may depend on the workspace's contents
    if (!r.status) return r;
  }
  r.status = dc.poison_outputs();
  if (!r.status) return r;
  r.status = status_of(entry == CallEntry::kPrefill
                           ? smla_prefill(ctx, &problem, &dc.args(), dc.varlen(), workspace.get(),
                                          workspace_bytes, stream)
                           : smla_decode(ctx, &problem, &dc.args(), dc.varlen(), workspace.get(),
                                         workspace_bytes, stream));
  if (!r.status) return r;
  r.status = session.synchronize(stream);
  if (!r.status) return r;
  r.status = dc.download(&r.out, &r.lse);
  if (!r.status) return r;
  r.comparison =
      ref::compare(problem, dc.host().num_rows, reference, r.out.data(), dc.args().out_row_stride,
                   dc.args().out_head_stride, problem.want_lse ? r.lse.data() : nullptr);
  return r;
}

}  // namespace smla
