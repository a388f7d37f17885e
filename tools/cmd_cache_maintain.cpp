// `smla cache verify` and `smla cache gc`: checking every blob of the cache file, and bounding
// its size. Both need an existing cache file: without one (missing, or degraded to memory
// only) the exit status is 2.
#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "codegen/nvrtc_compiler.h"
#include "tools/cache_commands.h"
#include "tools/cache_file_option.h"
#include "tools/size_text.h"

namespace smla::tools {
namespace {

constexpr int kNoCacheFile = 2;

struct GcOptions {
  int64_t max_bytes = -1;  // < 0: no size bound, only other toolchains' entries go
  CacheFileOption cache;
};

// The store of an existing, usable cache file, or null after saying why. Never creates the
// file: verifying or collecting a mistyped path must not report an empty cache as clean.
std::unique_ptr<CubinStore> open_cache_file(const char* command, const CacheFileOption& cache,
                                            const Logger& log) {
  const std::string path = cache.path();
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(path, ec)) {
    fmt::print(stderr, "smla cache {}: no cache file {}(the cache is memory only)\n", command,
               path.empty() ? "" : "at " + path + " ");
    return nullptr;
  }
  std::unique_ptr<CubinStore> store = cache.open(log);
  if (store->persistent()) return store;
  fmt::print(stderr, "smla cache {}: {} is not usable (the cache is memory only)\n", command, path);
  return nullptr;
}

int run_verify(const CacheFileOption& cache) {
  Logger log;
  apply_log_environment(&log);
  const std::unique_ptr<CubinStore> store = open_cache_file("verify", cache, log);
  if (store == nullptr) return kNoCacheFile;
  const VerifyReport report = store->verify();
  if (report.clean()) {
    fmt::print("{}: {} kernels checked, all clean\n", store->path(), report.checked);
    return 0;
  }
  fmt::print("{}: {} kernels checked, {} bad:\n", store->path(), report.checked, report.bad.size());
  for (const std::string& bad : report.bad) fmt::print("bad: {}\n", bad);
  return 1;
}

int run_gc(const GcOptions& o) {
  Logger log;
  apply_log_environment(&log);
  const std::unique_ptr<CubinStore> store = open_cache_file("gc", o.cache, log);
  if (store == nullptr) return kNoCacheFile;
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
      "verify", "check every cubin against its checksum (exit 1: damage found, 2: no cache file)");
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
