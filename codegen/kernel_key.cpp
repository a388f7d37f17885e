#include "codegen/kernel_key.h"

#define XXH_INLINE_ALL
#include <fmt/format.h>
#include <xxhash.h>

namespace smla {

const char* layout_name(smla_kv_layout layout) {
  switch (layout) {
    case SMLA_KV_FP8_UNIFORM:
      return "fp8_uniform";
    case SMLA_KV_FP8_PACKED:
      return "fp8_packed";
    case SMLA_KV_BF16:
      return "bf16";
  }
  return "?";
}

const char* dtype_name(smla_dtype dtype) { return dtype == SMLA_FP8_E4M3 ? "fp8_e4m3" : "bf16"; }

bool is_supported_arch(const std::string& arch) {
  return arch == "sm_90a" || arch == "sm_100a" || arch == "sm_103a";
}

std::string arch_for_compute_capability(int major, int minor) {
  if (major == 9 && minor == 0) return "sm_90a";
  if (major == 10 && minor == 0) return "sm_100a";
  if (major == 10 && minor == 3) return "sm_103a";
  return "";
}

KernelKey KernelKey::decode(const std::string& arch, const smla_problem& problem,
                            const TileConfig& tile) {
  KernelKey key;
  key.family = KernelFamily::kDecode;
  key.arch = arch;
  key.heads = problem.num_heads;
  key.q_dtype = problem.q_dtype;
  key.layout = problem.kv_layout;
  key.num_sources = problem.num_sources;
  for (int s = 0; s < problem.num_sources; ++s) {
    key.page_size[s] = problem.sources[s].page_size;
    key.width[s] = problem.sources[s].width;
  }
  key.sink = problem.has_sink != 0;
  key.lse = problem.want_lse != 0;
  key.tile = tile;
  return key;
}

KernelKey KernelKey::combine_for(const KernelKey& decode_key) {
  // The combine kernel depends on the heads, the segment count and the flags only; the other
  // fields stay at their defaults so that problems sharing those share one combine kernel.
  KernelKey key;
  key.family = KernelFamily::kCombine;
  key.arch = decode_key.arch;
  key.heads = decode_key.heads;
  key.sink = decode_key.sink;
  key.lse = decode_key.lse;
  key.tile.heads_per_cta = decode_key.tile.heads_per_cta;
  key.tile.segment_tiles = decode_key.geometry().segments;  // carried as the segment count
  return key;
}

DecodeShape KernelKey::shape() const {
  return DecodeShape{tile.heads_per_cta,
                     tile.warps,
                     tile.tile_entries,
                     tile.stages,
                     tile.segment_tiles,
                     static_cast<int>(layout),
                     num_sources,
                     width[0],
                     width[1],
                     tile.mma == MmaPath::kMmaSyncHeadsM,
                     tile.mma == MmaPath::kWgmma,
                     q_dtype == SMLA_FP8_E4M3,
                     lse};
}

const char* KernelKey::entry_point() const {
  return family == KernelFamily::kDecode ? "smla_decode" : "smla_combine";
}

std::string KernelKey::text() const {
  if (family == KernelFamily::kCombine) {
    return fmt::format("family=combine;arch={};heads={};hg={};segments={};sink={};lse={}", arch,
                       heads, tile.heads_per_cta, tile.segment_tiles, sink ? 1 : 0, lse ? 1 : 0);
  }
  std::string sources;
  for (int s = 0; s < num_sources; ++s) {
    sources += fmt::format("src{}=p{}w{};", s, page_size[s], width[s]);
  }
  return fmt::format(
      "family=decode;arch={};heads={};layout={};q={};{}sink={};lse={};tile={}", arch, heads,
      layout_name(layout), dtype_name(q_dtype), sources, sink ? 1 : 0, lse ? 1 : 0,
      tile.text());
}

// A row's most tiles: two sources of the widest index tables, in 32-entry tiles.
constexpr int kMaxSegmentTiles = 2 * SMLA_MAX_WIDTH / 32;

std::string KernelKey::unsupported_tile() const {
  const TileConfig& t = tile;
  if (t.tile_entries != 32 && t.tile_entries != 64) return "tile entries must be 32 or 64";
  // Before anything computes the geometry, which divides by it.
  if (t.segment_tiles < 1 || t.segment_tiles > kMaxSegmentTiles) {
    return fmt::format("segment tiles must be in [1, {}]", kMaxSegmentTiles);
  }
  if (t.mma == MmaPath::kWgmma) {
    if (!arch.empty() && arch != "sm_90a") return "wgmma runs on sm_90a only";
    if (layout == SMLA_KV_BF16) return "wgmma takes the fp8 layouts only";
    // NOTE: e4m3 operand stages leave room for a third stage, but three gave wrong results and
    // no time (docs/PERFORMANCE.md, "e4m3 scores"), so two it is.
    if (t.heads_per_cta != 64 || t.warps != 8 || t.tile_entries != 64 || t.stages != 2) {
      return "wgmma runs 64 heads per CTA, 8 warps over 64-entry tiles, two stages";
    }
  } else if (t.mma == MmaPath::kMmaSyncHeadsM) {
    if (t.heads_per_cta != 16 && t.heads_per_cta != 32) {
      return "heads per CTA must be 16 or 32 (mma_sync_hm)";
    }
    // NOTE: the one shape measured and GPU-tested (docs/decode-kernel.md); the template's
    // static_asserts would take 4 warps over 32 entries too.
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
  if (smem * t.min_blocks_per_sm > 228 * 1024 - 1024 * t.min_blocks_per_sm) {
    return fmt::format("{} bytes of shared memory per CTA do not fit {} CTAs per SM", smem,
                       t.min_blocks_per_sm);
  }
  return "";
}

uint64_t KernelKey::id(const std::string& fingerprint) const {
  const std::string material = text() + "|" + fingerprint;
  return XXH3_64bits(material.data(), material.size());
}

}  // namespace smla
