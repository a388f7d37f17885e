// Tuning rows (docs/design.md): `smla tune` times candidate tile configurations of a problem,
// batch bucket by batch bucket, on one device, against the heuristic schedule, and stores the
// fastest; smla_prepare looks the rows up for its device. This is what both sides share: the
// buckets, the problem's id in the table, the candidates, and which stored rows a context may
// run. No CUDA here: the timing loop is the tool's.
#pragma once

#include <smla.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cache/cubin_store.h"
#include "codegen/arch.h"
#include "codegen/tile_config.h"
#include "support/log.h"

namespace smla {

// What a tuning row was measured on: rows are valid only for this name, SM count and driver.
struct TuningDevice {
  std::string name;
  int sm_count = 0;
  int driver_version = 0;
};

// Buckets are powers of two of num_rows: a call of n rows uses the largest <= n, and the last,
// kMaxBatchBucket, serves every larger call.
constexpr int kMaxBatchBucket = 8192;
int batch_bucket(int num_rows);
std::vector<int> batch_buckets(int max_rows);  // 1, 2, 4, ..., batch_bucket(max_rows)
// The last row count `smla tune` times a bucket at: 2 bucket - 1, all its tile will serve (the
// last bucket's: max_rows when larger).
int bucket_last_rows(int bucket, int max_rows);

// A problem's identity in the tuning table: what its kernels and schedule depend on (heads,
// dtypes, layout, sources, sink and lse; not q_len, which no kernel depends on) and the mode,
// since batch-variant mode may store tiles that invariant mode must not run.
std::string tuning_problem_text(const smla_problem& problem, bool batch_variant);
uint64_t tuning_problem_id(const smla_problem& problem, bool batch_variant);

// The config text of a row that records that no candidate beat the heuristic schedule.
constexpr const char* kHeuristicConfig = "heuristic";

// Whether `tile` gives every row the same bits as `reference`, the problem's default tile: they
// may differ only in pipeline stages and CTAs per SM (copies and registers, not the order of any
// sum) and in a narrower CTA (a head's arithmetic is the same in CTAs of every width up to the
// default's: the narrow splits rely on it; a problem of 8 heads or fewer has one width, since
// its kernel sums in forms that only CTAs of at most 8 heads take). The path, warps, tile
// entries and segments decide the order of a row's sums.
bool same_row_bits(const TileConfig& tile, const TileConfig& reference);

// The tiles `smla tune` times for a problem on `arch` (each a whole schedule: the tile runs every
// call of its bucket, split or whole as the scheduler decides for it):
// - the mode's heuristic base tile with every width, stage count and occupancy hint it supports;
// - with batch_variant also other segment lengths (whole rows, 2, 4 or 8 segments), the other
//   mma.sync path, and on Hopper the wgmma tiles.
// Every candidate is one this problem can run (DecodeKernel::unsupported() is empty); the base
// is the first. In batch-invariant mode every candidate keeps the default's bits
// (same_row_bits).
std::vector<TileConfig> tuning_candidates(const ArchSpec& arch, const smla_problem& problem,
                                          bool batch_variant);

// The tile a stored config text lets `problem` run on `arch`, or nullopt with the reason in
// `why`: the heuristic marker, a text that is no tile, a tile this problem cannot run, or (in
// batch-invariant mode) a tile that would change a row's bits.
std::optional<TileConfig> usable_tuned_tile(const ArchSpec& arch, const smla_problem& problem,
                                            bool batch_variant, const std::string& config_text,
                                            std::string* why);

struct TunedTile {
  int bucket = 0;
  TileConfig tile;
};

// The usable rows of every bucket for this problem, mode and device, by rising bucket. A row
// that cannot be used is skipped with one info line (a heuristic marker silently).
std::vector<TunedTile> find_tuned_tiles(CubinStore& store, const TuningDevice& device,
                                        const ArchSpec& arch, const smla_problem& problem,
                                        bool batch_variant, const Logger& log);

}  // namespace smla
