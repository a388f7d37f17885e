// `smla cache verify [--repair]` and `smla cache gc`: checking every blob of the cache file,
// rebuilding a damaged one, and bounding its size. Both need an existing cache file they can
// use: the exit status is 2 without one, for gc of a file that cannot be opened for writing or is
// damaged, and for verify of a file it cannot read (permissions, a directory, another writer's
// lock past the busy timeout) or of a database that is not a cache of this schema version.
// Damage is verify's exit status 1; after a repair, 0.
#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "cache/file_repair.h"
#include "cache/file_verify.h"
#include "codegen/nvrtc_compiler.h"
#include "support/environment.h"
#include "tools/cache_commands.h"
#include "tools/cache_file_option.h"
#include "tools/size_text.h"

namespace smla::tools {
namespace {

struct VerifyOptions {
  bool repair = false;
  CacheFileOption cache;
};

struct GcOptions {
  int64_t max_bytes = -1;  // < 0: no size bound, only other toolchains' entries go
  CacheFileOption cache;
};

// Changes no content (cache/file_verify.h): a write-protected file is checked too, and a file
// that does not read as a database is damage, not a missing cache.
int run_repair(const std::string& path) {
  RepairReport repair;
  if (Status status = repair_cache_file(path, CubinStore::Options().busy_timeout_ms, &repair);
      !status) {
    fmt::print(stderr, "smla cache verify --repair: {}\n", status.message());
    return kExitUsage;
  }
  fmt::print("repaired {}: kept {} kernels and {} tuning rows, dropped {} kernels{}\n", path,
             repair.kernels_kept, repair.tuning_rows_kept, repair.kernels_dropped,
             repair.rows_unreachable
                 ? " (and the rows on damaged pages, which could not be counted)"
                 : "");
  return 0;
}

int run_verify(const VerifyOptions& o) {
  const std::string path = o.cache.existing_file("verify");
  if (path.empty()) return kExitUsage;
  VerifyReport report;
  if (Status status = verify_cache_file(path, CubinStore::Options().busy_timeout_ms, &report);
      !status) {
    fmt::print(stderr, "smla cache verify: {}\n", status.message());
    return kExitUsage;
  }
  if (report.clean()) {
    fmt::print("{}: {} kernels checked, all clean\n", path, report.checked);
    return 0;
  }
  fmt::print("{}: {} kernels checked, {} bad:\n", path, report.checked, report.bad.size());
  for (const std::string& bad : report.bad) fmt::print("bad: {}\n", bad);
  if (o.repair) return run_repair(path);
  fmt::print(
      "repair it with `smla cache verify --repair --cache {}` (keeps every kernel that reads "
      "back intact), or remove it\n",
      path);
  return kExitFailed;
}

int run_gc(const GcOptions& o) {
  Logger log;
  apply_log_environment(&log);
  const std::unique_ptr<CubinStore> store = o.cache.open_usable("gc", log);
  if (store == nullptr) return kExitUsage;
  GcReport report;
  if (const Status done = store->gc(o.max_bytes, toolchain_fingerprint(), &report); !done) {
    fmt::print(stderr, "smla cache gc: {}\n", done.message());
    return kExitUsage;
  }
  fmt::print("removed {} kernels; cubins {} ({} bytes) before, {} ({} bytes) after\n",
             report.removed, size_text(report.bytes_before), report.bytes_before,
             size_text(report.bytes_after), report.bytes_after);
  return 0;
}

}  // namespace

void add_cache_maintain_commands(CLI::App& cache, int* exit_code) {
  auto verify = std::make_shared<VerifyOptions>();
  CLI::App* c = cache.add_subcommand(
      "verify",
      "check every cubin against its checksum and the file's pages, changing no content (exit 1: "
      "damage found; 2: no readable cache file of this schema version)");
  c->add_flag("--repair", verify->repair,
              "when damage is found, replace the file with a clean one holding every kernel and "
              "tuning row that still reads back intact (run it when no process has the file open)");
  verify->cache.add_to(*c);
  c->callback([verify, exit_code] { *exit_code = run_verify(*verify); });

  auto gc = std::make_shared<GcOptions>();
  c = cache.add_subcommand("gc",
                           "remove other toolchains' kernels, then evict least recently used "
                           "ones down to --max-size");
  c->add_option("--max-size", gc->max_bytes,
                "bound on the cubins' total size: bytes, or with a suffix K, M, G (x1024)")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Validator(
          [](const std::string& bytes) {
            return bytes.empty() || bytes[0] != '-' ? std::string() : bytes + ": must be >= 0";
          },
          "BYTES"));
  gc->cache.add_to(*c);
  c->callback([gc, exit_code] { *exit_code = run_gc(*gc); });
}

}  // namespace smla::tools
