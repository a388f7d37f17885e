#include "codegen/tile_config.h"

#include <fmt/format.h>

#include <cstdio>

namespace smla {

const char* mma_path_name(MmaPath path) {
  switch (path) {
    case MmaPath::kMmaSync:
      return "mma_sync";
    case MmaPath::kMmaSyncHeadsM:
      return "mma_sync_hm";
    case MmaPath::kWgmma:
      return "wgmma";
  }
  return "?";
}

std::string TileConfig::text() const {
  return fmt::format("hg{}.w{}.te{}.st{}.seg{}.mb{}.{}", heads_per_cta, warps, tile_entries, stages,
                     segment_tiles, min_blocks_per_sm, mma_path_name(mma));
}

std::optional<TileConfig> TileConfig::parse(const std::string& text) {
  TileConfig config;
  char path[32] = {0};
  int consumed = 0;
  const int fields =
      std::sscanf(text.c_str(), "hg%d.w%d.te%d.st%d.seg%d.mb%d.%31[a-z0-9_]%n",
                  &config.heads_per_cta, &config.warps, &config.tile_entries, &config.stages,
                  &config.segment_tiles, &config.min_blocks_per_sm, path, &consumed);
  if (fields != 7 || consumed != static_cast<int>(text.size())) return std::nullopt;
  bool known = false;
  for (const MmaPath candidate : {MmaPath::kMmaSync, MmaPath::kMmaSyncHeadsM, MmaPath::kWgmma}) {
    if (std::string(path) != mma_path_name(candidate)) continue;
    config.mma = candidate;
    known = true;
  }
  if (!known) return std::nullopt;
  if (config.text() != text) return std::nullopt;  // canonical spelling only
  return config;
}

}  // namespace smla
