// The kernels and tuning row of fuzz_cache_file's seed files (fuzz/corpus/fuzz_cache_file),
// which fuzz_cache_seeds writes and the fuzzer looks up: ids spread over all 64 bits (high-bit
// ids exercise the signed storage), small deterministic cubins.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <vector>

#include "cache/cubin_store.h"
#include "support/xorshift_bytes.h"

namespace smla::fuzz {

inline constexpr int kSeedKernels = 3;
inline constexpr const char* kSeedFingerprint = "fuzz-fingerprint";

inline KernelEntry seed_entry(int index) {
  KernelEntry entry;
  entry.id = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(index + 1);
  entry.key_text = fmt::format("family=decode;arch=sm_90a;heads={};tile=seed", 8 << index);
  entry.arch = "sm_90a";
  entry.fingerprint = kSeedFingerprint;
  return entry;
}

// Kernel `index`'s cubin: 64 << index bytes of a xorshift sequence.
inline std::vector<uint8_t> seed_cubin(int index) {
  return test::xorshift_bytes(index, size_t{64} << index);
}

inline TuningRow seed_tuning_row() {
  TuningRow row;
  row.problem_id = 0x51ED5EEDull;
  row.batch_bucket = 64;
  row.device_name = "NVIDIA H200";
  row.sm_count = 132;
  row.driver_version = 13000;
  row.config_text = "hg16.w8.te32.st3.seg4.mb1.mma_sync";
  row.measured_us = 40;
  row.baseline_us = 50;
  return row;
}

}  // namespace smla::fuzz
