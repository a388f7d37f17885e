// `smla cache verify` and `smla cache gc`: checking every blob of the cache file, and bounding
// its size. Both need an existing cache file they can use: the exit status is 2 without one, for
// gc of a file that cannot be opened for writing, and for verify of a file it cannot read
// (permissions, a directory, another writer's lock past the busy timeout) or of a database that
// is not a cache of this schema version. Damage is verify's exit status 1.
#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "cache/file_verify.h"
#include "codegen/nvrtc_compiler.h"
#include "support/environment.h"
#include "tools/cache_commands.h"
#include "tools/cache_file_option.h"
#include "tools/size_text.h"

namespace smla::tools {
namespace {

struct GcOptions {
  int64_t max_bytes = -1;  // < 0: no size bound, only other toolchains' entries go
  CacheFileOption cache;
};

// Changes no content (cache/file_verify.h): a write-protected file is checked too, and a file
// that does not read as a database is damage, not a missing cache.
int run_verify(const CacheFileOption& cache) {
  const std::string path = cache.existing_file("verify");
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
  return kExitFailed;
}

int run_gc(const GcOptions& o) {
  Logger log;
  apply_log_environment(&log);
  const std::unique_ptr<CubinStore> store = o.cache.open_usable("gc", log);
  if (store == nullptr) return kExitUsage;
  const GcReport report = store->gc(o.max_bytes, toolchain_fingerprint());
  fmt::print("removed {} kernels; cubins {} ({} bytes) before, {} ({} bytes) after\n",
             report.removed, size_text(report.bytes_before), report.bytes_before,
             size_text(report.bytes_after), report.bytes_after);
  return 0;
}

}  // namespace

void add_cache_maintain_commands(CLI::App& cache, int* exit_code) {
  auto verify = std::make_shared<CacheFileOption>();
  CLI::App* c = cache.add_subcommand(
      "verify",
      "check every cubin against its checksum and the file's pages, changing no content (exit 1: "
      "damage found; 2: no readable cache file of this schema version)");
  verify->add_to(*c);
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
