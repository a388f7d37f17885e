// `smla cache ls`, `stats` and `path`: what the cache holds and where it is.
#include <fmt/format.h>

#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cache/layered_store.h"
#include "deployments/json_text.h"
#include "support/environment.h"
#include "tools/cache_commands.h"
#include "tools/cache_file_option.h"
#include "tools/size_text.h"

namespace smla::tools {
namespace {

struct InspectOptions {
  bool json = false;
  CacheFileOption cache;
};

std::string local_time_text(int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  localtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", &tm);
  return text;
}

int run_ls(const InspectOptions& o) {
  Logger log;
  apply_log_environment(&log);
  const std::unique_ptr<CubinStore> store = o.cache.open_existing("ls", log);
  if (store == nullptr) return kExitUsage;
  std::vector<KernelEntry> entries;
  if (const Status listed = store->list(&entries); !listed) {
    fmt::print(stderr, "smla cache ls: {}\n", listed.message());
    return kExitUsage;
  }
  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const KernelEntry& e : entries) {
      // The id as 16 hex digits (the file name `smla cache export` writes): JSON readers that
      // hold numbers in doubles would round a 64-bit integer.
      out.push_back({{"id", fmt::format("{:016x}", e.id)},
                     {"key", e.key_text},
                     {"arch", e.arch},
                     {"fingerprint", e.fingerprint},
                     {"cubin_bytes", e.cubin_bytes},
                     {"compile_ms", e.compile_ms},
                     {"hits", e.hits},
                     {"created", e.created},
                     {"last_used", e.last_used},
                     {"origin", e.origin}});
    }
    fmt::print("{}\n", json_text(out));
    return 0;
  }
  // The key goes last: it is long and of varying length, and the columns before it align.
  fmt::print("{:<8} {:>10} {:>10} {:>6}  {:<19}  {}\n", "arch", "bytes", "compile ms", "hits",
             "last used", "key");
  for (const KernelEntry& e : entries) {
    fmt::print("{:<8} {:>10} {:>10.0f} {:>6}  {:<19}  {}\n", e.arch, e.cubin_bytes, e.compile_ms,
               e.hits, local_time_text(e.last_used), e.key_text);
  }
  return 0;
}

int run_stats(const InspectOptions& o) {
  Logger log;
  apply_log_environment(&log);
  StoreStats s;
  if (const Status damage = o.cache.damage(); !damage) {
    fmt::print(stderr, "smla cache stats: {}\n", damage.message());
    return kExitUsage;
  }
  if (o.cache.read_only()) {
    const Status read = LayeredCubinStore::read_only_stats(
        o.cache.path(), CubinStore::Options().busy_timeout_ms, &s);
    if (!read) {
      fmt::print(stderr, "smla cache stats: {}\n", read.message());
      return kExitUsage;
    }
  } else {
    const std::unique_ptr<CubinStore> store = o.cache.open_existing("stats", log);
    if (store == nullptr) return kExitUsage;
    if (const Status read = store->stats(&s); !read) {
      fmt::print(stderr, "smla cache stats: {}\n", read.message());
      return kExitUsage;
    }
  }
  if (o.json) {
    const nlohmann::json out = {{"kernels", s.kernels},         {"cubin_bytes", s.cubin_bytes},
                                {"tuning_rows", s.tuning_rows}, {"hits", s.hits},
                                {"file_bytes", s.file_bytes},   {"path", s.path},
                                {"persistent", s.persistent}};
    fmt::print("{}\n", json_text(out));
    return 0;
  }
  fmt::print("path         {}\n", s.path.empty() ? "(memory only)" : s.path);
  fmt::print("persistent   {}\n", s.persistent     ? "yes"
                                  : s.path.empty() ? "no"
                                                   : "no (read-only: this user may not write it)");
  fmt::print("kernels      {}\n", s.kernels);
  fmt::print("cubins       {} ({} bytes)\n", size_text(s.cubin_bytes), s.cubin_bytes);
  fmt::print("tuning rows  {}\n", s.tuning_rows);
  fmt::print("hits         {}\n", s.hits);
  fmt::print("file         {} ({} bytes)\n", size_text(s.file_bytes), s.file_bytes);
  return 0;
}

int run_path(const CacheFileOption& cache) {
  const std::string path = cache.path();
  if (path.empty()) {
    fmt::print(stderr,
               "smla cache path: no cache file, kernels stay in memory (set SMLA_CACHE, "
               "XDG_CACHE_HOME or HOME, or pass --cache PATH)\n");
    return kExitUsage;
  }
  fmt::print("{}\n", path);
  return 0;
}

}  // namespace

void add_cache_inspect_commands(CLI::App& cache, int* exit_code) {
  auto ls = std::make_shared<InspectOptions>();
  CLI::App* c = cache.add_subcommand("ls", "list the cached kernels, one line each");
  c->add_flag("--json", ls->json, "JSON array");
  ls->cache.add_to(*c);
  c->callback([ls, exit_code] { *exit_code = run_ls(*ls); });

  auto stats = std::make_shared<InspectOptions>();
  c = cache.add_subcommand("stats", "totals: kernels, cubin bytes, tuning rows, hits, file size");
  c->add_flag("--json", stats->json, "JSON object");
  stats->cache.add_to(*c);
  c->callback([stats, exit_code] { *exit_code = run_stats(*stats); });

  auto path = std::make_shared<CacheFileOption>();
  c = cache.add_subcommand("path", "print the cache file's path");
  path->add_to(*c);
  c->callback([path, exit_code] { *exit_code = run_path(*path); });
}

}  // namespace smla::tools
