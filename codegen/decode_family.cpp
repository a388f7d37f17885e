#include "codegen/decode_family.h"

#include <fmt/format.h>

#include "codegen/combine_family.h"
#include "codegen/names.h"

namespace smla {

bool uses_e4m3_scores(const ArchSpec& arch, const smla_problem& problem, const TileConfig& tile) {
  if (problem.q_dtype != SMLA_FP8_E4M3 || problem.kv_layout != SMLA_KV_FP8_UNIFORM) return false;
  switch (tile.mma) {
    case MmaPath::kMmaSync:
      // NOTE: e4m3 products are exact in fp32 like the f16 ones; only the order of the fp32 sums
      // changes, so the choice is per problem (its narrow splits give the same bits). Measured
      // 2.4-3.7% faster at 64 and 128 heads, 1-4% slower at 8 and 16 (their 128-register
      // kernels): above 16 heads only.
      return problem.num_heads > 16;
    case MmaPath::kMmaSyncHeadsM:
      // NOTE: this path needs more registers; ptxas spilled it on sm_90a at partial 32-head
      // groups and at 32 heads on datacenter Blackwell: multiples of 32 heads on Hopper.
      return problem.num_heads % 32 == 0 && arch.family == ArchFamily::kHopper;
    case MmaPath::kWgmma:
      // NOTE: wgmma's e4m3 products keep the running sum in about 13 bits: out stays within its
      // tolerance, an lse would not, so not when the lse is asked for.
      return !problem.want_lse;
  }
  return false;
}

DecodeKernel DecodeKernel::of(const ArchSpec& arch, const smla_problem& problem,
                              const TileConfig& tile) {
  DecodeKernel k;
  k.arch = &arch;
  k.heads = problem.num_heads;
  k.q_dtype = problem.q_dtype;
  k.num_sources = problem.num_sources;
  for (int s = 0; s < problem.num_sources; ++s) {
    const smla_source_desc& desc = problem.sources[s];
    k.sources[s] = {problem.kv_layout, desc.page_size, desc.width, desc.kind, desc.ratio};
  }
  k.sink = problem.has_sink != 0;
  k.lse = problem.want_lse != 0;
  k.tile = tile;
  k.e4m3_scores = uses_e4m3_scores(arch, problem, tile);
  return k;
}

std::string DecodeKernel::text() const {
  std::string sources;
  for (int s = 0; s < num_sources; ++s) {
    const DecodeSource& src = this->sources[s];
    sources +=
        fmt::format("src{}={}.p{}.w{}", s, layout_name(src.layout), src.page_size, src.width);
    if (src.kind != SMLA_SOURCE_LIST) sources += fmt::format(".{}", source_kind_name(src.kind));
    if (src.kind == SMLA_SOURCE_PREFIX) sources += std::to_string(src.ratio);
    sources += ';';
  }
  return fmt::format("family=decode;arch={};heads={};q={};{}sink={};lse={};qk={};tile={}",
                     arch->name, heads, dtype_name(q_dtype), sources, sink ? 1 : 0, lse ? 1 : 0,
                     e4m3_scores ? "e4m3" : "16bit", tile.text());
}

std::string DecodeKernel::prologue() const {
  const TileConfig& t = tile;
  const DecodeSource& second =
      num_sources > 1 ? sources[1] : DecodeSource{sources[0].layout, 1, 0, SMLA_SOURCE_LIST, 0};
  return fmt::format(
      "constexpr int kNumHeads = {};\n"
      "constexpr int kHeadsPerCta = {};\n"
      "constexpr int kWarps = {};\n"
      "constexpr int kTileEntries = {};\n"
      "constexpr int kStages = {};\n"
      "constexpr int kSegmentTiles = {};\n"
      "constexpr int kMinBlocksPerSm = {};\n"
      "constexpr bool kHeadsOnM = {};\n"
      "constexpr bool kWgmma = {};\n"
      "constexpr int kLayout = {};  // {}\n"
      "constexpr bool kQFp8 = {};\n"
      "constexpr bool kE4m3Scores = {};\n"
      "constexpr int kNumSources = {};\n"
      "constexpr int kPageSize0 = {};\n"
      "constexpr int kWidth0 = {};\n"
      "constexpr int kKind0 = {};\n"
      "constexpr int kRatio0 = {};\n"
      "constexpr int kPageSize1 = {};\n"
      "constexpr int kWidth1 = {};\n"
      "constexpr int kKind1 = {};\n"
      "constexpr int kRatio1 = {};\n"
      "constexpr bool kHasSink = {};\n"
      "constexpr bool kWantLse = {};\n"
      "constexpr int kArchSmemPerCta = {};\n",
      heads, t.heads_per_cta, t.warps, t.tile_entries, t.stages, t.segment_tiles,
      t.min_blocks_per_sm, t.mma == MmaPath::kMmaSyncHeadsM, t.mma == MmaPath::kWgmma,
      static_cast<int>(sources[0].layout), layout_name(sources[0].layout), q_dtype == SMLA_FP8_E4M3,
      e4m3_scores, num_sources, sources[0].page_size, sources[0].width,
      static_cast<int>(sources[0].kind), sources[0].ratio, second.page_size, second.width,
      static_cast<int>(second.kind), second.ratio, sink, lse, arch->smem_per_cta);
}

const char* DecodeKernel::template_name() const {
  switch (tile.mma) {
    case MmaPath::kWgmma:
      return "decode_wgmma_kernel.cuh";
    case MmaPath::kMmaSyncHeadsM:
      return "decode_heads_m_kernel.cuh";
    case MmaPath::kMmaSync:
      break;
  }
  return "decode_kernel.cuh";
}

DecodeShape DecodeKernel::shape() const {
  return DecodeShape{tile.heads_per_cta,
                     tile.warps,
                     tile.tile_entries,
                     tile.stages,
                     tile.segment_tiles,
                     static_cast<int>(sources[0].layout),
                     num_sources,
                     sources[0].width,
                     num_sources > 1 ? sources[1].width : 0,
                     tile.mma == MmaPath::kMmaSyncHeadsM,
                     tile.mma == MmaPath::kWgmma,
                     q_dtype == SMLA_FP8_E4M3,
                     lse,
                     e4m3_scores};
}

CombineKernel DecodeKernel::combine() const {
  // The combine kernel depends on the heads, the segment count and the flags only, so problems
  // sharing those share one combine kernel.
  CombineKernel k;
  k.arch = arch;
  k.heads = heads;
  k.heads_per_cta = tile.heads_per_cta;
  k.segments = geometry().segments;
  k.sink = sink;
  k.lse = lse;
  return k;
}

std::string DecodeKernel::unsupported() const {
  const TileConfig& t = tile;
  if (num_sources > 1 && sources[1].layout != sources[0].layout) {
    return "sources of different layouts are not built yet";
  }
  if (t.tile_entries != 32 && t.tile_entries != 64) return "tile entries must be 32 or 64";
  // Before anything computes the geometry, which divides by it.
  if (t.segment_tiles < 1 || t.segment_tiles > kMaxSegmentTiles) {
    return fmt::format("segment tiles must be in [1, {}]", kMaxSegmentTiles);
  }
  const smla_kv_layout layout = sources[0].layout;
  if (t.mma == MmaPath::kWgmma) {
    if (!arch->wgmma) return fmt::format("wgmma does not run on {}", arch->name);
    if (layout == SMLA_KV_BF16) return "wgmma takes the fp8 layouts only";
    // NOTE: e4m3 operand stages leave room for a third stage, but three gave wrong results and
    // no time, so two it is.
    if (t.heads_per_cta != 64 || t.warps != 8 || t.tile_entries != 64 || t.stages != 2) {
      return "wgmma runs 64 heads per CTA, 8 warps over 64-entry tiles, two stages";
    }
  } else if (t.mma == MmaPath::kMmaSyncHeadsM) {
    if (t.heads_per_cta != 16 && t.heads_per_cta != 32) {
      return "heads per CTA must be 16 or 32 (mma_sync_hm)";
    }
    // NOTE: the one shape measured and GPU-tested; the template's static_asserts would take
    // 4 warps over 32 entries too.
    if (t.warps != 8 || t.tile_entries != 64) {
      return "mma_sync_hm runs 8 warps over 64-entry tiles";
    }
  } else {
    if (t.heads_per_cta != 8 && t.heads_per_cta != 16 && t.heads_per_cta != 32) {
      return "heads per CTA must be 8, 16 or 32";
    }
    const int entry_blocks = t.tile_entries / 16;
    if (t.warps != 2 * entry_blocks && t.warps != 4 * entry_blocks) {
      return "warps must be 2 or 4 per 16-entry block (tile entries / 8 or / 4)";
    }
  }
  if (t.stages < 2 || t.stages > 8) return "stages must be in [2, 8]";
  if (t.min_blocks_per_sm < 1 || t.min_blocks_per_sm > 4) return "CTAs per SM must be in [1, 4]";
  const int smem = geometry().smem_bytes;
  if (!arch->fits(smem, t.min_blocks_per_sm)) {
    return fmt::format("{} bytes of shared memory per CTA do not fit {} CTAs per SM on {}", smem,
                       t.min_blocks_per_sm, arch->name);
  }
  return "";
}

}  // namespace smla
