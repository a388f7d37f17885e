// One call's inputs on the device: a reference::HostCase copied to device memory, with output
// buffers poisoned before every run so that an unwritten element is caught, and optional NaN
// guard bytes around every cache allocation. Runs through the public C API and compares with
// the CPU reference; shared by tests/gpu and `smla check`.
#pragma once

#include <cuda.h>
#include <smla.h>

#include <vector>

#include "harness/device_session.h"
#include "reference/compare.h"
#include "reference/random_case.h"

namespace smla {

struct DeviceCaseOptions {
  // Bytes of 0xFF (NaN as e4m3 and bf16) before and after every cache; 0 places each cache in
  // an allocation of exactly its size (for compute-sanitizer memcheck).
  size_t guard_bytes = 4096;
};

class DeviceCase {
 public:
  static Status upload(const DeviceSession& session, const ref::HostCase& host,
                       const DeviceCaseOptions& options, DeviceCase* device_case);

  const ref::HostCase& host() const { return *host_; }
  // Arguments pointing at device memory.
  const smla_args& args() const { return args_; }
  // The varlen description of a case with window or prefix sources (host arrays of the case,
  // device copies uploaded), else NULL.
  const smla_varlen* varlen() const { return varlen_.num_requests > 0 ? &varlen_ : nullptr; }
  // Poisons out (0xFFFF, bf16 NaN) and lse (NaN).
  Status poison_outputs() const;
  // Copies out ([rows][heads][512] bf16) and lse back.
  Status download(std::vector<uint16_t>* out, std::vector<float>* lse) const;
  // Rewrites one source's index table (same shape) on the device.
  Status upload_indices(int source, const std::vector<int32_t>& indices) const;
  Status upload_lengths(int source, const std::vector<int32_t>& lengths) const;

 private:
  const ref::HostCase* host_ = nullptr;
  std::vector<DeviceBuffer> buffers_;
  size_t out_index_ = 0, lse_index_ = 0;
  size_t index_buffer_[SMLA_MAX_SOURCES] = {0, 0};
  size_t length_buffer_[SMLA_MAX_SOURCES] = {0, 0};
  smla_args args_{};
  smla_varlen varlen_{};
};

// The entry point a check calls: smla_prefill needs the case's varlen description.
enum class CallEntry { kDecode, kPrefill };

// Runs `device_case` once through `entry` (prepare, poison, call, synchronize), and compares
// with `reference` (ref::varlen_attention of the case).
struct CheckResult {
  Status status;
  ref::Comparison comparison;
  std::vector<uint16_t> out;
  std::vector<float> lse;
};
CheckResult run_and_compare(smla_context* ctx, const DeviceSession& session,
                            const DeviceCase& device_case, const ref::ReferenceResult& reference,
                            CUstream stream, CallEntry entry = CallEntry::kDecode);

Status status_of(smla_status code);  // the C API's status with smla_last_error()

}  // namespace smla
