// `smla cache build`: compiles every kernel a deployment can use, for named architectures, in
// parallel, into the cache, so that serving never compiles. Needs no GPU. Exit 1 when a kernel
// failed, or when kernels it compiled could not be kept in the cache file (read-only, damaged,
// full) unless --memory-ok says a dry run is meant; `--cache ""` is a dry run by definition.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cache/file_verify.h"
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
  std::vector<std::string> archs;  // empty: the local GPU's, or every arch of the table
  int jobs = 0;                    // 0: one per hardware thread
  int max_context = 0;             // 0: kDefaultMaxContext (presets only)
  bool json = false;
  bool memory_ok = false;
  CacheFileOption cache;
};

// Every arch of the arch table: a machine without a GPU prepares for any deployment target.
std::vector<std::string> all_archs() {
  std::vector<std::string> names;
  for (const ArchSpec& arch : arch_table()) names.push_back(arch.name);
  return names;
}

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

// What became of the cache file: the path asked for, and whether every kernel built is in it.
struct CacheOutcome {
  std::string path;
  bool persistent = false;
};

void print_summary(const std::string& deployment, const std::vector<std::string>& archs,
                   const ParallelBuildReport& report, const CacheOutcome& cache, bool json) {
  const BuildCounts& c = report.counts;
  if (json) {
    nlohmann::json failures = nlohmann::json::array();
    for (const KernelBuildOutcome& k : report.kernels) {
      if (!k.status) failures.push_back({{"key", k.key_text}, {"error", k.status.message()}});
    }
    const nlohmann::json out = {{"deployment", deployment},
                                {"archs", archs},
                                {"cache", cache.path},
                                {"persistent", cache.persistent},
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
             cache.persistent     ? cache.path
             : cache.path.empty() ? "in memory only (nothing was kept)"
                                  : fmt::format("{} (but {} kernels are in memory only: not kept)",
                                                cache.path, report.not_kept()));
}

// Why kernels built were not kept in `path`, and what to do about it.
std::string not_kept_message(const std::string& path, const Status& file_status, int not_kept) {
  const std::string why = !file_status ? file_status.message()
                          : may_write_cache_file(path)
                              ? "the file failed while building (see the warnings above)"
                              : fmt::format("this user may not write {} (or its directory)", path);
  return fmt::format(
      "{} kernels were compiled but not kept in the cache: {}. Build as a user who may write "
      "it, or pass --cache a file this user may write; --memory-ok accepts a dry run",
      not_kept, why);
}

int run_build(const BuildOptions& o) {
  Deployment deployment;
  std::vector<const ArchSpec*> archs;
  std::vector<KernelKey> keys;
  Status status = deployment_of(o, &deployment);
  if (status) status = resolve_archs(o.archs, all_archs(), &archs);
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
  Status file_status;
  std::unique_ptr<CubinStore> store = o.cache.open(log, &file_status);
  // The workers open the same file (read-only too: what it holds is found there), or (where
  // this store could not use it) compile in memory.
  CubinStore::Options workers_store;
  if (file_status) workers_store.path = o.cache.path();
  // The workers' connections are the file's users now (the last to close folds its log in).
  store.reset();
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
  CacheOutcome cache{o.cache.path(), false};
  cache.persistent = !cache.path.empty() && report.not_kept() == 0;
  print_summary(deployment.name, arch_list(archs), report, cache, o.json);
  if (report.counts.failed > 0) return kExitFailed;
  if (!cache.persistent && !cache.path.empty() && !o.memory_ok) {
    fmt::print(stderr, "smla cache build: {}\n",
               not_kept_message(cache.path, file_status, report.not_kept()));
    return kExitFailed;
  }
  return 0;
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
                  fmt::format("targets: {} (default: the local GPU's, or all of them "
                              "without one)",
                              arch_names()));
  c->add_option("--jobs", o->jobs,
                "parallel compilations (0, the default: one per hardware thread)");
  c->add_option("--max-context", o->max_context,
                "presets: the context length that sizes the HCA width (entries = context / 128; "
                "default 131072)")
      ->check(CLI::Range(kMinMaxContext, INT_MAX));
  c->add_flag("--json", o->json, "JSON summary");
  c->add_flag("--memory-ok", o->memory_ok,
              "a dry run: exit 0 even if the kernels cannot be kept in the cache file");
  o->cache.add_to(*c);
  c->callback([o, exit_code] { *exit_code = run_build(*o); });
}

}  // namespace smla::tools
