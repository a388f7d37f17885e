// KernelKey: one kernel of any family (docs/design.md), as the builder, the cache and the runtime
// see it. Its text is canonical and readable ("family=decode;arch=sm_90a;heads=16;..."), logged
// and shown by `smla cache ls`; its id is XXH3-64 of the text plus the toolchain fingerprint.
// What a family's fields mean, and how its text, prologue and geometry follow from them, is in
// the family's file (decode_family.h, combine_family.h).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "codegen/combine_family.h"
#include "codegen/decode_family.h"

namespace smla {

enum class KernelFamily { kDecode, kCombine };

class KernelKey {
 public:
  KernelKey(const DecodeKernel& kernel) : kernel_(kernel) {}   // NOLINT: a key of either family
  KernelKey(const CombineKernel& kernel) : kernel_(kernel) {}  // NOLINT

  KernelFamily family() const;
  const ArchSpec& arch() const;
  std::string text() const;
  uint64_t id(const std::string& fingerprint) const;
  // The generated prologue (namespace smla::cfg) and the template it specializes.
  std::string prologue() const;
  const char* template_name() const;
  // The extern "C" kernels of the module; the first names the NVRTC program.
  std::vector<const char*> entry_points() const;
  int threads() const;
  int smem_bytes() const;  // dynamic shared memory per CTA

  // The family's fields, or nullptr for a key of the other family.
  const DecodeKernel* decode() const { return std::get_if<DecodeKernel>(&kernel_); }
  const CombineKernel* combine() const { return std::get_if<CombineKernel>(&kernel_); }

 private:
  std::variant<DecodeKernel, CombineKernel> kernel_;
};

}  // namespace smla
