// `smla tune` (docs/design.md): on the target GPU, times each problem's candidate tiles per
// batch bucket against the heuristic schedule and stores the winners as tuning rows in the cache
// that contexts on this machine open (tools/tune_problem.h). `--list` prints the candidates
// without a GPU.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "autotune/tuning.h"
#include "deployments/deployment.h"
#include "deployments/json_text.h"
#include "harness/device_session.h"
#include "runtime/context.h"
#include "tools/cache_file_option.h"
#include "tools/commands.h"
#include "tools/problem_options.h"
#include "tools/tune_problem.h"

namespace smla::tools {
namespace {

struct TuneCommand {
  ProblemOptions problems;
  TuneOptions tune;
  bool batch_variant = false;
  bool list = false;
  std::string arch = "sm_90a";
  bool json = false;
};

// The selected problems, one per tuning id (problems that differ only in q_len share rows).
Status distinct_problems(const TuneCommand& o,
                         std::vector<std::pair<std::string, smla_problem>>* problems) {
  std::vector<std::pair<std::string, smla_problem>> selected;
  SMLA_TRY(o.problems.resolve(&selected));
  std::set<uint64_t> seen;
  for (const auto& [label, problem] : selected) {
    if (seen.insert(tuning_problem_id(problem, o.tune.batch_variant)).second) {
      problems->emplace_back(label, problem);
    }
  }
  return ok_status();
}

int list_candidates(const TuneCommand& o,
                    const std::vector<std::pair<std::string, smla_problem>>& problems) {
  const ArchSpec* arch = find_arch(o.arch);
  if (arch == nullptr) {
    return report_failure("tune",
                          fmt::format("--arch {}: expected one of {}", o.arch, arch_names()),
                          o.json, kExitUsage);
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [label, problem] : problems) {
    std::vector<std::string> tiles;
    for (const TileConfig& tile : tuning_candidates(*arch, problem, o.tune.batch_variant)) {
      tiles.push_back(tile.text());
    }
    if (o.json) {
      out.push_back({{"layer", label}, {"problem", problem_text(problem)}, {"candidates", tiles}});
      continue;
    }
    fmt::print("{} {} ({}, {}): {} candidates\n", label, problem_text(problem), o.arch,
               o.tune.batch_variant ? "batch-variant" : "batch-invariant", tiles.size());
    for (const std::string& tile : tiles) fmt::print("  {}\n", tile);
  }
  if (o.json) fmt::print("{}\n", json_text(out));
  return 0;
}

int run_tune(TuneCommand o) {
  o.tune.batch_variant = o.batch_variant;
  if (o.list && o.problems.deployment.empty() && o.problems.sources.empty()) {
    o.problems.deployment = kDefaultDeployment;
  }
  std::vector<std::pair<std::string, smla_problem>> problems;
  Status status = distinct_problems(o, &problems);
  if (!status) return report_failure("tune", status.message(), o.json, exit_status_of(status));
  if (o.list) return list_candidates(o, problems);

  const auto fail = [&o](const std::string& why, int exit_status) {
    return report_failure("tune", why, o.json, exit_status);
  };
  // The contexts' settings as the environment makes them; the tuner then picks what each runs.
  Logger log;
  ContextSettings settings;
  if (status = context_settings(nullptr, &log, &settings); !status) {
    return fail(status.message(), kExitUsage);
  }
  if (settings.plan.forced_tile) {
    log.warn("SMLA_TILE is ignored: smla tune picks the tile of each context it times");
  }
  const CubinStore::Options& store_options = settings.store;
  const std::string memory_only =
      "the cache is memory-only, so tuning rows would be lost: set SMLA_CACHE to a file (or "
      "HOME / XDG_CACHE_HOME)";
  if (store_options.path.empty()) return fail(memory_only, kExitUsage);
  // Before the cache is opened, which would create its file for nothing.
  std::unique_ptr<DeviceSession> device;
  if (status = DeviceSession::open(0, &device); !status) return fail(status.message(), kExitFailed);
  device.reset();
  Status file_status;
  const std::unique_ptr<CubinStore> store = CubinStore::open(store_options, log, &file_status);
  if (!store->persistent()) {
    return fail(file_status
                    ? fmt::format("this user may not write {}, so tuning rows would be lost",
                                  store_options.path)
                    : file_status.message(),
                kExitUsage);
  }
  nlohmann::json out = nlohmann::json::array();
  if (!o.json) {
    fmt::print("{:<44} {:>6} {:>11} {:>11} {:>6}  {}\n", "problem", "rows", "heuristic", "best",
               "tiles", "stored");
  }
  for (size_t i = 0; status && i < problems.size(); ++i) {
    const auto& [label, problem] = problems[i];
    std::vector<TunedBucket> buckets;
    status = tune_problem(problem, o.tune, settings, *store, log, &buckets);
    for (const TunedBucket& b : buckets) {
      const std::string rows = b.rows.size() > 1
                                   ? fmt::format("{}-{}", b.rows.front(), b.rows.back())
                                   : fmt::format("{}", b.rows.front());
      if (o.json) {
        out.push_back({{"layer", label},
                       {"problem", problem_text(problem)},
                       {"bucket", b.bucket},
                       {"rows", b.rows},
                       {"heuristic_us", b.heuristic_us},
                       {"best", b.best},
                       {"best_us", b.best_us},
                       {"candidates", b.candidates},
                       {"stored", b.config}});
      } else {
        fmt::print("{:<44} {:>6} {:>11.2f} {:>11.2f} {:>6}  {}\n", problem_text(problem), rows,
                   b.heuristic_us, b.best_us, b.candidates, b.config);
      }
    }
  }
  if (!status) return report_failure("tune", status.message(), o.json, out, kExitFailed);
  if (o.json) fmt::print("{}\n", json_text(out));
  if (!o.json) {
    fmt::print("tuning rows written to {} (us: per call, summed over the rows timed)\n",
               store->path());
  }
  return 0;
}

}  // namespace

void add_tune_command(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<TuneCommand>();
  auto* c = app.add_subcommand(
      "tune", "time candidate tiles per batch bucket on the GPU and store the fastest (GPU)");
  o->problems.add_to(*c);
  c->add_option("--max-rows", o->tune.max_rows, "tune the buckets 1, 2, 4, ... up to this")
      ->check(CLI::Range(1, kMaxBatchBucket * 2 - 1));
  c->add_flag("--batch-variant", o->batch_variant,
              "tune batch-variant mode's rows (smla_options.batch_variant = 1)");
  c->add_option("--margin", o->tune.margin,
                "keep a candidate only if this much faster than the heuristic, twice")
      ->check(kFinite & CLI::Range(0.0, 0.5));
  c->add_option("--jobs", o->tune.jobs, "parallel compilations (0: one per hardware thread)")
      ->check(CLI::NonNegativeNumber);
  c->add_option("--iters", o->tune.bench.iterations, "graph replays per measurement")
      ->check(CLI::Range(1, 1000000));
  c->add_option("--repeats", o->tune.bench.repeats, "measurements (the median is used)")
      ->check(CLI::Range(1, 1000000));
  c->add_option("--pool-gb", o->tune.bench.pool_gb, "KV pool per source in GB")
      ->check(kFinite & CLI::Range(0.01, 64.0));
  CLI::Option* list =
      c->add_flag("--list", o->list,
                  fmt::format("print the candidates and exit (no GPU; default problems: {})",
                              kDefaultDeployment));
  // Tuning measures the local GPU: a target architecture means something to --list only.
  c->add_option("--arch", o->arch, fmt::format("with --list: the target ({})", arch_names()))
      ->needs(list);
  c->add_flag("--json", o->json, "JSON output");
  c->callback([o, exit_code] { *exit_code = run_tune(*o); });
}

}  // namespace smla::tools
