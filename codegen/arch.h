// The architectures smla compiles for, and the facts about each that code generation, the plan
// and the runtime use. A new target is one row of this table: nothing else compares arch names.
#pragma once

#include <string>
#include <vector>

namespace smla {

enum class ArchFamily {
  kHopper,             // sm_90a: H100, H200, H20
  kBlackwell,          // sm_100a, sm_103a: B200, B300 (tensor memory, tcgen05)
  kBlackwellConsumer,  // sm_120a, sm_121a: RTX PRO 6000, RTX 5090, DGX Spark
};

struct ArchSpec {
  const char* name;  // NVRTC's target, also the key's arch field: "sm_90a"
  int major, minor;  // the compute capability of the devices that run it
  ArchFamily family;
  int smem_per_sm;        // bytes of shared memory the CTAs resident on one SM share...
  int smem_reserved_cta;  // ...less this much per CTA, which the system keeps
  int smem_per_cta;       // the most one CTA may use (opted in at load)
  // SMs a plan counts as one wave of CTAs: the plans' split bounds and wave splits use it.
  int wave_sms;
  bool wgmma;    // warpgroup MMAs (the wgmma decode path)
  bool tcgen05;  // tensor-memory MMAs (no kernel uses them yet)

  // Whether `ctas` CTAs of `smem_bytes` each fit one SM.
  bool fits(int smem_bytes, int ctas) const {
    return smem_bytes <= smem_per_cta && ctas * (smem_bytes + smem_reserved_cta) <= smem_per_sm;
  }
};

// Every arch, in the order `smla cache build` lists and builds them.
const std::vector<ArchSpec>& arch_table();
// The row of `name`, or nullptr.
const ArchSpec* find_arch(const std::string& name);
// The arch a device of compute capability major.minor needs, or nullptr when smla has none.
const ArchSpec* arch_for_compute_capability(int major, int minor);
// "sm_90a, sm_100a, ...", for messages.
std::string arch_names();

}  // namespace smla
