// `smla tune`'s measuring loop (docs/design.md) for one problem on the local GPU: for every batch
// bucket up to max_rows, the heuristic schedule and each candidate tile (autotune/tuning.h) are
// timed on the same inputs (`smla bench`'s: KV from HBM); the fastest candidate is kept where it
// beats the heuristic by the margin in two rounds, and each bucket gets a tuning row.
#pragma once

#include <smla.h>

#include <string>
#include <vector>

#include "cache/cubin_store.h"
#include "harness/bench.h"
#include "runtime/context_settings.h"
#include "support/log.h"
#include "support/status.h"

namespace smla::tools {

struct TuneOptions {
  int max_rows = 256;          // buckets 1, 2, 4, ... up to this
  bool batch_variant = false;  // the mode whose rows are tuned
  double margin = 0.03;        // a candidate must be this much faster than the heuristic, twice
  int jobs = 0;                // parallel compilations (0: one per hardware thread)
  BenchOptions bench;          // iterations, repeats and KV pool of each measurement
};

struct TunedBucket {
  int bucket = 0;
  std::vector<int> rows;    // the row counts timed: the bucket's first and last
                            // (bucket_last_rows)
  std::string config;       // what was stored: a tile's text, or kHeuristicConfig
  std::string best;         // the fastest candidate of the first round ("" if none ran)
  double heuristic_us = 0;  // per call, summed over `rows`: the confirming round's when the
  double best_us = 0;       // first round's winner beat the heuristic by the margin
  int candidates = 0;       // timed: those whose plan fits the heuristic's workspace
};

// Times the candidates with contexts of `settings` (the caller's: options and environment) that
// differ in what they run: the heuristic plan of the mode without tuning rows, and each
// candidate forced. `store` is the cache file those contexts open (persistent: the caller
// checks); each bucket's row is written there.
Status tune_problem(const smla_problem& problem, const TuneOptions& options,
                    const ContextSettings& settings, CubinStore& store, const Logger& log,
                    std::vector<TunedBucket>* buckets);

}  // namespace smla::tools
