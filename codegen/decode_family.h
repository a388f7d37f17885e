// The decode kernel family: everything that specializes one decode kernel (its key fields), the
// canonical text of those fields, the generated prologue, which template it includes, its
// entry point, its geometry (threads, shared memory, tiles, segments) and whether a tile can be
// built for it at all. Templates: decode_kernel.cuh (entries on the MMAs' M),
// decode_heads_m_kernel.cuh (heads on M), decode_wgmma_kernel.cuh (Hopper's warpgroup MMAs).
#pragma once

#include <smla.h>

#include <string>

#include "codegen/arch.h"
#include "codegen/tile_config.h"
#include "templates/decode_geometry.cuh"

namespace smla {

struct CombineKernel;

// One source as the kernel sees it: its layout, page size, width, and how a row's entries are
// found (a per-row list, or a window or prefix of its request's block table).
struct DecodeSource {
  smla_kv_layout layout = SMLA_KV_FP8_PACKED;
  int page_size = 0;
  int width = 0;
  smla_source_kind kind = SMLA_SOURCE_LIST;
  int ratio = 0;  // prefix only
};

struct DecodeKernel {
  const ArchSpec* arch = nullptr;
  int heads = 0;
  smla_dtype q_dtype = SMLA_BF16;
  int num_sources = 1;
  DecodeSource sources[SMLA_MAX_SOURCES];
  bool sink = false;
  bool lse = false;
  TileConfig tile;
  // Q·K as e4m3 products of q's and the cache's bytes (fp8 q on the uniform layout), not 16-bit
  // products of converted values; decided by uses_e4m3_scores() from the fields above.
  bool e4m3_scores = false;

  // `problem` on `arch` with `tile`. NOTE: q_len is not a field: the kernels compute a request's
  // q_len rows as ordinary rows, each with its own lists, so problems that differ only in q_len
  // share their kernels.
  static DecodeKernel of(const ArchSpec& arch, const smla_problem& problem, const TileConfig& tile);

  // "family=decode;arch=sm_90a;heads=16;q=bf16;src0=fp8_packed.p256.w128;...;tile=..."; a
  // window source adds ".window", a prefix ".prefix128" (its ratio).
  std::string text() const;
  // The constexpr values of namespace smla::cfg that specialize the template.
  std::string prologue() const;
  const char* template_name() const;
  static constexpr const char* kEntryPoint = "smla_decode";

  DecodeShape shape() const;
  DecodeGeometry geometry() const { return decode_geometry(shape()); }
  // The combine kernel that finishes this kernel's split calls (meaningful when it has several
  // segments).
  CombineKernel combine() const;
  // Empty when this tile can be built for this problem and arch, else why not (the template's
  // static_asserts and the arch's limits, checked before compiling).
  std::string unsupported() const;
};

// Whether a kernel of these fields multiplies Q·K in e4m3 (DecodeKernel::e4m3_scores).
bool uses_e4m3_scores(const ArchSpec& arch, const smla_problem& problem, const TileConfig& tile);

// A row's most tiles: two sources of the widest index tables, in 32-entry tiles.
constexpr int kMaxSegmentTiles = 2 * SMLA_MAX_WIDTH / 32;

}  // namespace smla
