#include "codegen/kernel_key.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace smla {

KernelFamily KernelKey::family() const {
  return decode() ? KernelFamily::kDecode : KernelFamily::kCombine;
}

const ArchSpec& KernelKey::arch() const { return decode() ? *decode()->arch : *combine()->arch; }

std::string KernelKey::text() const { return decode() ? decode()->text() : combine()->text(); }

uint64_t KernelKey::id(const std::string& fingerprint) const {
  const std::string material = text() + "|" + fingerprint;
  return XXH3_64bits(material.data(), material.size());
}

std::string KernelKey::prologue() const {
  return decode() ? decode()->prologue() : combine()->prologue();
}

const char* KernelKey::template_name() const {
  return decode() ? decode()->template_name() : CombineKernel::kTemplate;
}

std::vector<const char*> KernelKey::entry_points() const {
  if (decode()) return {DecodeKernel::kEntryPoint};
  return {CombineKernel::kEntryPoint, CombineKernel::kPrefixEntryPoint};
}

int KernelKey::threads() const {
  return decode() ? decode()->geometry().threads : combine()->threads();
}

int KernelKey::smem_bytes() const { return decode() ? decode()->geometry().smem_bytes : 0; }

}  // namespace smla
