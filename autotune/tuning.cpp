#include "autotune/tuning.h"

#define XXH_INLINE_ALL
#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>

#include "autotune/heuristics.h"
#include "codegen/decode_family.h"
#include "codegen/names.h"

namespace smla {

int batch_bucket(int num_rows) {
  int bucket = 1;
  while (bucket * 2 <= num_rows && bucket < kMaxBatchBucket) bucket *= 2;
  return bucket;
}

std::vector<int> batch_buckets(int max_rows) {
  std::vector<int> buckets;
  for (int bucket = 1; bucket <= batch_bucket(max_rows); bucket *= 2) buckets.push_back(bucket);
  return buckets;
}

int bucket_last_rows(int bucket, int max_rows) {
  return bucket == kMaxBatchBucket ? std::max(bucket, max_rows) : 2 * bucket - 1;
}

std::string tuning_problem_text(const smla_problem& problem, bool batch_variant) {
  std::string text =
      fmt::format("heads={};q={};kv={};sources={}", problem.num_heads, dtype_name(problem.q_dtype),
                  layout_name(problem.kv_layout), problem.num_sources);
  for (int s = 0; s < problem.num_sources; ++s) {
    const smla_source_desc& desc = problem.sources[s];
    text += fmt::format(";page{}={};width{}={}", s, desc.page_size, s, desc.width);
    // List sources add nothing, so that the tuning rows kept before structured kinds still match.
    if (desc.kind != SMLA_SOURCE_LIST)
      text += fmt::format(";kind{}={}", s, source_kind_name(desc.kind));
    if (desc.kind == SMLA_SOURCE_PREFIX) text += std::to_string(desc.ratio);
  }
  return text + fmt::format(";sink={};lse={};mode={}", problem.has_sink ? 1 : 0,
                            problem.want_lse ? 1 : 0, batch_variant ? "variant" : "invariant");
}

uint64_t tuning_problem_id(const smla_problem& problem, bool batch_variant) {
  const std::string text = tuning_problem_text(problem, batch_variant);
  return XXH3_64bits(text.data(), text.size());
}

bool same_row_bits(const TileConfig& tile, const TileConfig& reference) {
  return tile.mma == reference.mma && tile.heads_per_cta <= reference.heads_per_cta &&
         tile.warps == reference.warps && tile.tile_entries == reference.tile_entries &&
         tile.segment_tiles == reference.segment_tiles;
}

namespace {

class CandidateList {
 public:
  CandidateList(const ArchSpec& arch, const smla_problem& problem)
      : arch_(arch), problem_(problem) {}

  // Each width up to `base`'s, each stage count of 2..4 and 1 or 2 CTAs per SM.
  void add_variations(const TileConfig& base) {
    for (const int heads_per_cta : {8, 16, 32}) {
      for (const int stages : {2, 3, 4}) {
        for (const int ctas_per_sm : {1, 2}) {
          if (heads_per_cta > base.heads_per_cta) continue;
          TileConfig tile = base;
          tile.heads_per_cta = heads_per_cta;
          tile.stages = stages;
          tile.min_blocks_per_sm = ctas_per_sm;
          add(tile);
        }
      }
    }
  }
  void add(const TileConfig& tile) {
    if (!DecodeKernel::of(arch_, problem_, tile).unsupported().empty()) return;
    if (std::find(tiles_.begin(), tiles_.end(), tile) != tiles_.end()) return;
    tiles_.push_back(tile);
  }
  std::vector<TileConfig> take() { return std::move(tiles_); }

 private:
  const ArchSpec& arch_;
  const smla_problem& problem_;
  std::vector<TileConfig> tiles_;
};

// `tile` with segments of about `entries` entries (at least one tile).
TileConfig with_segment_entries(TileConfig tile, int entries) {
  tile.segment_tiles = std::max(1, ceil_div(entries, tile.tile_entries));
  return tile;
}

}  // namespace

std::vector<TileConfig> tuning_candidates(const ArchSpec& arch, const smla_problem& problem,
                                          bool batch_variant) {
  // Each mode's base first (batch-variant mode's is the mma.sync tile).
  const TileConfig base =
      batch_variant ? mma_sync_tile(arch, problem) : default_tile(arch, problem);
  CandidateList list(arch, problem);
  list.add(base);
  list.add_variations(base);
  if (!batch_variant) return list.take();
  list.add(default_tile(arch, problem));  // the wgmma kernel in segments, on Hopper

  const int tiles = DecodeKernel::of(arch, problem, base).geometry().tiles;
  for (const int segments : {1, 2, 4, 8}) {
    TileConfig tile = base;
    tile.segment_tiles = ceil_div(tiles, segments);
    list.add(tile);
  }
  // The other mma.sync path, with the default's segment length and with whole rows.
  TileConfig other = base;
  other.warps = 8;
  other.stages = 2;
  if (base.mma == MmaPath::kMmaSync) {
    other.mma = MmaPath::kMmaSyncHeadsM;
    other.heads_per_cta = problem.num_heads <= 16 ? 16 : 32;
    other.tile_entries = 64;
  } else {
    other.mma = MmaPath::kMmaSync;
    other.heads_per_cta = 32;
    other.tile_entries = 32;
  }
  const int segment_entries = base.segment_tiles * base.tile_entries;
  int row_entries = 0;
  for (int s = 0; s < problem.num_sources; ++s) {
    row_entries += align_up(problem.sources[s].width, other.tile_entries);
  }
  for (const int entries : {segment_entries, row_entries}) {
    for (const int ctas_per_sm : {1, 2}) {
      other.min_blocks_per_sm = ctas_per_sm;
      list.add(with_segment_entries(other, entries));
    }
  }
  if (const std::optional<TileConfig> fast = fast_tile(arch, problem)) list.add(*fast);
  return list.take();
}

std::optional<TileConfig> usable_tuned_tile(const ArchSpec& arch, const smla_problem& problem,
                                            bool batch_variant, const std::string& config_text,
                                            std::string* why) {
  if (config_text == kHeuristicConfig) {
    *why = "the heuristic schedule was the fastest";
    return std::nullopt;
  }
  const std::optional<TileConfig> tile = TileConfig::parse(config_text);
  if (!tile) {
    *why = "not a tile configuration";
    return std::nullopt;
  }
  const std::string unsupported = DecodeKernel::of(arch, problem, *tile).unsupported();
  if (!unsupported.empty()) {
    *why = unsupported;
    return std::nullopt;
  }
  if (!batch_variant && !same_row_bits(*tile, default_tile(arch, problem))) {
    *why = "it would change a row's bits, and this context is batch-invariant";
    return std::nullopt;
  }
  return tile;
}

std::vector<TunedTile> find_tuned_tiles(CubinStore& store, const TuningDevice& device,
                                        const ArchSpec& arch, const smla_problem& problem,
                                        bool batch_variant, const Logger& log) {
  std::vector<TunedTile> tuned;
  const uint64_t id = tuning_problem_id(problem, batch_variant);
  for (const int bucket : batch_buckets(kMaxBatchBucket)) {
    const std::optional<TuningRow> row =
        store.find_tuning(id, bucket, device.name, device.sm_count, device.driver_version);
    if (!row) continue;
    std::string why;
    if (const std::optional<TileConfig> tile =
            usable_tuned_tile(arch, problem, batch_variant, row->config_text, &why)) {
      tuned.push_back({bucket, *tile});
    } else if (row->config_text != kHeuristicConfig) {
      log.info("tuning row of {} for {}+ rows not used ({}): {}",
               tuning_problem_text(problem, batch_variant), bucket, row->config_text, why);
    }
  }
  return tuned;
}

}  // namespace smla
