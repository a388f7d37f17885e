#include "tools/tune_problem.h"

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <memory>

#include "autotune/tuning.h"
#include "harness/device_case.h"
#include "plan/decode_plan.h"
#include "runtime/context.h"
#include "runtime/kernel_builder.h"
#include "tools/parallel_build.h"

namespace smla::tools {
namespace {

using ContextOwner = std::unique_ptr<smla_context, smla_status (*)(smla_context*)>;

// A context of `settings`, prepared for `problem`.
Status prepared_context(const ContextSettings& settings, const smla_problem& problem, int max_rows,
                        ContextOwner* owner) {
  smla_context* ctx = nullptr;
  SMLA_TRY(create_context_handle(settings, &ctx));
  owner->reset(ctx);
  size_t workspace = 0;
  return status_of(smla_prepare(ctx, &problem, max_rows, &workspace));
}

// Compiles every candidate's kernels into the cache at once (NVRTC dominates a tuning run
// otherwise) and returns those that built.
std::vector<TileConfig> build_candidates(const ArchSpec& arch, const smla_problem& problem,
                                         const std::vector<TileConfig>& candidates, int jobs,
                                         const CubinStore::Options& store_options,
                                         const Logger& log) {
  std::vector<KernelKey> keys;
  std::vector<size_t> first_key;  // of each candidate: its decode kernel, then its combine
  for (const TileConfig& tile : candidates) {
    first_key.push_back(keys.size());
    const DecodeKernel kernel = DecodeKernel::of(arch, problem, tile);
    keys.push_back(kernel);
    if (kernel.geometry().segments > 1) keys.push_back(kernel.combine());
  }
  first_key.push_back(keys.size());
  const ParallelBuildReport report = build_in_parallel(store_options, log, keys, jobs, nullptr);
  std::vector<TileConfig> built;
  for (size_t c = 0; c < candidates.size(); ++c) {
    bool ok = true;
    for (size_t k = first_key[c]; k < first_key[c + 1]; ++k) ok = ok && report.kernels[k].status;
    if (ok) {
      built.push_back(candidates[c]);
    } else {
      log.warn("candidate {} did not build; not timed", candidates[c].text());
    }
  }
  return built;
}

// The per-call µs of `ctx` summed over `rows`.
Status time_rows(ProblemBench& bench, smla_context* ctx, const std::vector<int>& rows,
                 const BenchOptions& options, double* sum_us) {
  *sum_us = 0;
  for (const int r : rows) {
    double median = 0, spread = 0;
    SMLA_TRY(bench.time(ctx, r, options, &median, &spread));
    *sum_us += median;
  }
  return ok_status();
}

}  // namespace

Status tune_problem(const smla_problem& problem, const TuneOptions& options,
                    const ContextSettings& settings, CubinStore& store, const Logger& log,
                    std::vector<TunedBucket>* results) {
  std::unique_ptr<ProblemBench> bench;
  SMLA_TRY(ProblemBench::open(problem, options.bench.pool_gb, &bench));
  DeviceInfo device;
  SMLA_TRY(bench->session().info(&device));
  if (device.arch == nullptr) {
    return error(SMLA_ERR_UNSUPPORTED, "device {} is not one smla runs on", device.name);
  }
  const ArchSpec& arch = *device.arch;
  const std::vector<TileConfig> candidates =
      build_candidates(arch, problem, tuning_candidates(arch, problem, options.batch_variant),
                       options.jobs, settings.store, log);

  ContextSettings heuristic_settings = settings;
  heuristic_settings.plan.batch_variant = options.batch_variant;
  heuristic_settings.plan.forced_tile.reset();
  heuristic_settings.use_tuning = false;
  ContextOwner heuristic(nullptr, smla_context_destroy);
  SMLA_TRY(prepared_context(heuristic_settings, problem, options.max_rows, &heuristic));
  std::vector<ContextOwner> contexts;
  for (const TileConfig& tile : candidates) {
    ContextSettings forced = heuristic_settings;
    forced.plan.forced_tile = tile;
    contexts.emplace_back(nullptr, smla_context_destroy);
    SMLA_TRY(prepared_context(forced, problem, options.max_rows, &contexts.back()));
  }
  const DecodePlan* heuristic_plan = context_of(heuristic.get())->plan(problem);

  const uint64_t problem_id = tuning_problem_id(problem, options.batch_variant);
  for (const int bucket : batch_buckets(options.max_rows)) {
    TunedBucket result;
    result.bucket = bucket;
    result.rows = {bucket};
    const int last = bucket_last_rows(bucket, options.max_rows);
    if (last != bucket) result.rows.push_back(last);

    double heuristic_us = 0;
    SMLA_TRY(time_rows(*bench, heuristic.get(), result.rows, options.bench, &heuristic_us));
    int best = -1;
    double best_us = 0;
    for (size_t c = 0; c < candidates.size(); ++c) {
      // Time only what a plan with this row would run: a tile whose launch needs more
      // workspace than the heuristic's at some row count of the bucket is not used there.
      const DecodePlan* forced_plan = context_of(contexts[c].get())->plan(problem);
      if (!std::all_of(result.rows.begin(), result.rows.end(), [&](int r) {
            return forced_plan->call(r, SIZE_MAX).launch.workspace_bytes <=
                   heuristic_plan->workspace_bytes(r);
          })) {
        continue;
      }
      ++result.candidates;
      double us = 0;
      SMLA_TRY(time_rows(*bench, contexts[c].get(), result.rows, options.bench, &us));
      if (best < 0 || us < best_us) {
        best = static_cast<int>(c);
        best_us = us;
      }
    }
    result.config = kHeuristicConfig;
    result.heuristic_us = result.best_us = heuristic_us;
    if (best >= 0) {
      result.best = candidates[best].text();
      // NOTE: the machine is shared and a difference smaller than the spread of two timings is
      // noise (docs/PERFORMANCE.md): the winner is timed again against the heuristic and kept only
      // if it wins by the margin both times.
      result.best_us = best_us;
      if (best_us < heuristic_us * (1 - options.margin)) {
        SMLA_TRY(
            time_rows(*bench, heuristic.get(), result.rows, options.bench, &result.heuristic_us));
        SMLA_TRY(
            time_rows(*bench, contexts[best].get(), result.rows, options.bench, &result.best_us));
        if (result.best_us < result.heuristic_us * (1 - options.margin)) {
          result.config = result.best;
        }
      }
    }
    TuningRow row;
    row.problem_id = problem_id;
    row.batch_bucket = bucket;
    row.device_name = device.name;
    row.sm_count = device.sm_count;
    row.driver_version = device.driver_version;
    row.config_text = result.config;
    row.measured_us = result.config == kHeuristicConfig ? result.heuristic_us : result.best_us;
    row.baseline_us = result.heuristic_us;
    row.created = static_cast<int64_t>(std::time(nullptr));
    SMLA_TRY(store.put_tuning(row));
    // A write that fails leaves the store memory-only (with a warning), not an error.
    if (!store.persistent()) {
      return error(SMLA_ERR_CACHE, "the tuning rows could not be written to the cache file");
    }
    results->push_back(result);
  }
  return ok_status();
}

}  // namespace smla::tools
