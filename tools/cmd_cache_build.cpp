// `smla cache build`: compiles every kernel a deployment can use, for named architectures, in
// parallel, into the cache, so that serving never compiles. Needs no GPU.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "deployments/deployment.h"
#include "deployments/json_text.h"
#include "support/environment.h"
#include "tools/arch_options.h"
#include "tools/cache_commands.h"
#include "tools/cache_file_option.h"
#include "tools/deployment_kernels.h"
#include "tools/parallel_build.h"
#include "tools/progress_line.h"
#include "tools/size_text.h"

namespace smla::tools {
namespace {

// A compile error can be pages of NVRTC log; the summary shows its start.
constexpr int kErrorLinesShown = 12;

struct BuildOptions {
  std::string preset;
  std::string deployment_file;
  std::vector<std::string> archs;  // empty: the local GPU's, or sm_100a,sm_103a without one
  int jobs = 0;                    // 0: one per hardware thread
  int max_context = 0;             // 0: kDefaultMaxContext (presets only)
  bool json = false;
  CacheFileOption cache;
};

Status deployment_of(const BuildOptions& o, Deployment* deployment) {
  // --deployment takes a file or a preset's name (docs/design.md), --preset only a preset's.
  if (!o.deployment_file.empty()) {
    return resolve_deployment(o.deployment_file, o.max_context, deployment);
  }
  if (o.preset.empty()) {
    return error(SMLA_ERR_INVALID_ARGUMENT, "name a --preset ({}) or a --deployment FILE.json",
                 fmt::join(preset_names(), ", "));
  }
  const std::vector<std::string> presets = preset_names();
  if (std::find(presets.begin(), presets.end(), o.preset) == presets.end()) {
    return error(SMLA_ERR_INVALID_ARGUMENT, "unknown preset \"{}\": the presets are {}", o.preset,
                 fmt::join(presets, ", "));
  }
  return preset_deployment(o.preset, o.max_context, deployment);
}

std::string first_lines(const std::string& text, int count) {
  std::istringstream lines(text);
  std::string result;
  std::string line;
  for (int i = 0; i < count && std::getline(lines, line); ++i) result += "  " + line + "\n";
  if (std::getline(lines, line)) result += "  ...\n";
  return result;
}

void print_summary(const std::string& deployment, const std::vector<std::string>& archs,
                   const ParallelBuildReport& report, const CubinStore& store, bool json) {
  const BuildCounts& c = report.counts;
  if (json) {
    nlohmann::json failures = nlohmann::json::array();
    for (const KernelBuildOutcome& k : report.kernels) {
      if (!k.status) failures.push_back({{"key", k.key_text}, {"error", k.status.message()}});
    }
    const nlohmann::json out = {{"deployment", deployment},
                                {"archs", archs},
                                {"cache", store.path()},
                                {"persistent", store.persistent()},
                                {"kernels", c.total},
                                {"compiled", c.compiled},
                                {"cached", c.cached},
                                {"failed", c.failed},
                                {"seconds", report.seconds},
                                {"median_compile_ms", report.median_compile_ms()},
                                {"cubin_bytes", report.cubin_bytes()},
                                {"failures", failures}};
    fmt::print("{}\n", json_text(out));
    return;
  }
  fmt::print("{} on {}: {} kernels: {} compiled, {} already cached, {} failed in {:.1f} s\n",
             deployment, fmt::join(archs, ","), c.total, c.compiled, c.cached, c.failed,
             report.seconds);
  const std::string median =
      c.compiled > 0 ? fmt::format("median compile {:.0f} ms, ", report.median_compile_ms()) : "";
  fmt::print("{}cubins {}, cache {}\n", median, size_text(report.cubin_bytes()),
             store.persistent() ? store.path() : "in memory only (nothing was kept)");
}

int run_build(const BuildOptions& o) {
  Deployment deployment;
  std::vector<const ArchSpec*> archs;
  std::vector<KernelKey> keys;
  Status status = deployment_of(o, &deployment);
  if (status) status = resolve_archs(o.archs, {"sm_100a", "sm_103a"}, &archs);
  if (status && o.jobs < 0) {
    status = error(SMLA_ERR_INVALID_ARGUMENT,
                   "--jobs {}: must be >= 1 (0: one per hardware thread)", o.jobs);
  }
  if (status) status = deployment_kernels(deployment, archs, &keys);
  if (!status) {
    return report_failure("cache build", status.message(), o.json, exit_status_of(status));
  }
  Logger log;
  apply_log_environment(&log);
  const std::unique_ptr<CubinStore> store = o.cache.open(log);
  // The workers open the same file, or (where this store could not keep it) compile in memory.
  CubinStore::Options workers_store;
  if (store->persistent()) workers_store.path = o.cache.path();
  ParallelBuildReport report;
  {
    ProgressLine progress;
    report = build_in_parallel(workers_store, log, keys, o.jobs,
                               [&](const BuildCounts& counts) { progress.draw(counts); });
  }
  for (const KernelBuildOutcome& k : report.kernels) {
    if (!k.status) {
      fmt::print(stderr, "failed: {}\n{}", k.key_text,
                 first_lines(k.status.message(), kErrorLinesShown));
    }
  }
  print_summary(deployment.name, arch_list(archs), report, *store, o.json);
  return report.counts.failed == 0 ? 0 : kExitFailed;
}

}  // namespace

void add_cache_build_command(CLI::App& cache, int* exit_code) {
  auto o = std::make_shared<BuildOptions>();
  CLI::App* c = cache.add_subcommand(
      "build",
      "compile every kernel a deployment can use, for named architectures (no GPU needed)");
  CLI::Option* preset =
      c->add_option("--preset", o->preset,
                    fmt::format("an embedded deployment: {}", fmt::join(preset_names(), ", ")));
  c->add_option("--deployment", o->deployment_file, "a deployment JSON file or a preset's name")
      ->excludes(preset);
  add_list_option(*c, "--arch", &o->archs,
                  fmt::format("targets: {} (default: the local GPU's, or sm_100a,sm_103a "
                              "without one)",
                              arch_names()));
  c->add_option("--jobs", o->jobs,
                "parallel compilations (0, the default: one per hardware thread)");
  c->add_option("--max-context", o->max_context,
                "presets: the context length that sizes the HCA width (entries = context / 128; "
                "default 131072)")
      ->check(CLI::Range(kMinMaxContext, INT_MAX));
  c->add_flag("--json", o->json, "JSON summary");
  o->cache.add_to(*c);
  c->callback([o, exit_code] { *exit_code = run_build(*o); });
}

}  // namespace smla::tools
