// KernelKey: everything that changes the generated code of one kernel (DESIGN.md §3). Its text
// is canonical and readable ("family=decode;arch=sm_90a;heads=16;..."), logged and shown by
// `smla cache ls`; its id is XXH3-64 of the text plus the toolchain fingerprint.
// NOTE: q_len is not in it: the decode kernels compute a request's q_len rows as ordinary rows,
// each with its own lists, so problems that differ only in q_len share their kernels (a
// deployment with MTP compiles each kernel once, not once per q_len).
#pragma once

#include <smla.h>

#include <cstdint>
#include <string>

#include "codegen/tile_config.h"
#include "templates/decode_geometry.cuh"

namespace smla {

enum class KernelFamily { kDecode, kCombine };

struct KernelKey {
  KernelFamily family = KernelFamily::kDecode;
  std::string arch;  // "sm_90a", "sm_100a", "sm_103a"
  int heads = 0;
  smla_dtype q_dtype = SMLA_BF16;
  smla_kv_layout layout = SMLA_KV_FP8_PACKED;
  int num_sources = 1;
  int page_size[SMLA_MAX_SOURCES] = {0, 0};
  int width[SMLA_MAX_SOURCES] = {0, 0};
  bool sink = false;
  bool lse = false;
  TileConfig tile;

  static KernelKey decode(const std::string& arch, const smla_problem& problem,
                          const TileConfig& tile);
  // The combine kernel that finishes split-mode decode calls of `decode_key`.
  static KernelKey combine_for(const KernelKey& decode_key);

  std::string text() const;
  uint64_t id(const std::string& fingerprint) const;
  DecodeShape shape() const;
  DecodeGeometry geometry() const { return decode_geometry(shape()); }
  const char* entry_point() const;  // the extern "C" kernel name
  // A combine kernel's second kernel, for prefix calls (templates/combine_kernel.cuh).
  static constexpr const char* kCombinePrefixEntryPoint = "smla_combine_prefix";
  // Empty when the decode kernel's tile configuration can be built for this problem, else why
  // not (the template's static_asserts, checked before compiling).
  std::string unsupported_tile() const;
};

const char* layout_name(smla_kv_layout layout);  // "fp8_uniform", "fp8_packed", "bf16"
const char* dtype_name(smla_dtype dtype);        // "bf16", "fp8_e4m3"

// The architectures smla compiles for, and the one a device of compute capability major.minor
// needs ("" when unsupported).
bool is_supported_arch(const std::string& arch);
std::string arch_for_compute_capability(int major, int minor);

}  // namespace smla
