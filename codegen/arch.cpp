#include "codegen/arch.h"

namespace smla {

const std::vector<ArchSpec>& arch_table() {
  constexpr int kKiB = 1024;
  // NOTE: the plans' wave bounds were measured on 132-SM H100s and H200s. B200 and B300 have 148
  // SMs, but the sm_100a and sm_103a plans keep 132 until they are measured there (a plan for
  // fewer SMs than the device has leaves some idle; one for more adds a short second wave).
  // The consumer parts plan for their smaller members: RTX 5090 (170 SMs; the RTX PRO 6000 has
  // 188) and DGX Spark (48).
  static const std::vector<ArchSpec> kTable = {
      {"sm_90a", 9, 0, ArchFamily::kHopper, 228 * kKiB, kKiB, 227 * kKiB, 132, true, false},
      {"sm_100a", 10, 0, ArchFamily::kBlackwell, 228 * kKiB, kKiB, 227 * kKiB, 132, false, true},
      {"sm_103a", 10, 3, ArchFamily::kBlackwell, 228 * kKiB, kKiB, 227 * kKiB, 132, false, true},
      {"sm_120a", 12, 0, ArchFamily::kBlackwellConsumer, 100 * kKiB, kKiB, 99 * kKiB, 170, false,
       false},
      {"sm_121a", 12, 1, ArchFamily::kBlackwellConsumer, 100 * kKiB, kKiB, 99 * kKiB, 48, false,
       false},
  };
  return kTable;
}

const ArchSpec* find_arch(const std::string& name) {
  for (const ArchSpec& arch : arch_table()) {
    if (name == arch.name) return &arch;
  }
  return nullptr;
}

const ArchSpec* arch_for_compute_capability(int major, int minor) {
  for (const ArchSpec& arch : arch_table()) {
    if (arch.major == major && arch.minor == minor) return &arch;
  }
  return nullptr;
}

std::string arch_names() {
  std::string names;
  for (const ArchSpec& arch : arch_table()) {
    names += names.empty() ? "" : ", ";
    names += arch.name;
  }
  return names;
}

}  // namespace smla
