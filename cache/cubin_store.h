// The persistent kernel cache (docs/design.md): one SQLite file of cubins and tuning rows, an
// optional read-only system cache consulted first, and cross-process leases so that one process
// compiles each kernel while the others wait for its cubin. Knows SQLite and bytes, not CUDA.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/log.h"
#include "support/status.h"

namespace smla {

// What the store knows about a kernel besides its cubin (the cache's `kernels` row).
struct KernelEntry {
  uint64_t id = 0;          // XXH3 of key text + toolchain fingerprint (codegen computes it)
  std::string key_text;     // canonical KernelKey text
  std::string arch;         // "sm_90a", ...
  std::string fingerprint;  // toolchain fingerprint text
  double compile_ms = 0;
  int64_t cubin_bytes = 0;
  int64_t created = 0;  // unix seconds
  int64_t last_used = 0;
  int64_t hits = 0;
  std::string origin;  // "user", "system" or "memory" (listing only)
};

struct TuningRow {
  uint64_t problem_id = 0;
  int batch_bucket = 0;  // power of two of num_rows
  std::string device_name;
  int sm_count = 0;
  int driver_version = 0;
  std::string config_text;  // a TileConfig's text
  double measured_us = 0;
  double baseline_us = 0;  // the heuristic default's time
  int64_t created = 0;
};

struct StoreStats {
  int64_t kernels = 0;
  int64_t cubin_bytes = 0;
  int64_t tuning_rows = 0;
  int64_t hits = 0;
  int64_t file_bytes = 0;
  bool persistent = false;
  std::string path;
};

struct VerifyReport {
  int64_t checked = 0;
  // Key texts whose blob failed its xxh64 check (prefixed "system: " for the system cache), and
  // "database: ..." lines for damage SQLite itself reports.
  std::vector<std::string> bad;
  bool clean() const { return bad.empty(); }
};

struct GcReport {
  int64_t removed = 0;  // entries evicted (least recently used first) or stale
  int64_t bytes_before = 0;
  int64_t bytes_after = 0;
};

// Produces a cubin for a kernel that is not cached: called outside any transaction.
using CompileFn = std::function<Status(std::vector<uint8_t>* cubin, double* compile_ms)>;

// Calls `compile`, an exception becoming SMLA_ERR_INTERNAL, so that a store that marked the
// kernel as being compiled (its waiters, its lease) always learns the end and releases it.
Status run_compile(const CompileFn& compile, std::vector<uint8_t>* cubin, double* compile_ms);

class CubinStore {
 public:
  struct Options {
    std::string path;         // "" = memory only
    std::string system_path;  // "" = none; opened read-only
    int busy_timeout_ms = 30000;
    int lease_timeout_s = 600;  // a lease older than this is taken over
    int lease_poll_ms = 20;
  };

  // Never fails. A file this user may not write is read as a read-only layer over memory (new
  // kernels stay in memory); a file that cannot be opened, created or read degrades to
  // memory-only. Either way with one warning through `log` (the logger must outlive the store),
  // and `file_status` (optional) says whether the file is in use (OK, read-write or read-only)
  // or why not (a damaged file's message names the remedy). Thread-safe. Like any SQLite
  // connection, a store must not be used across fork(): open one in the child.
  static std::unique_ptr<CubinStore> open(const Options& options, const Logger& log,
                                          Status* file_status = nullptr);
  virtual ~CubinStore() = default;

  virtual bool persistent() const = 0;
  virtual std::string path() const = 0;

  // The cubin of `id`: system cache, then user cache, then the in-memory table. Every blob is
  // checked against its xxh64; a bad entry is deleted, logged, and reported as a miss. A hit
  // updates last_used and hits (best effort).
  virtual std::optional<std::vector<uint8_t>> find(uint64_t id) = 0;

  // Returns the cubin of `entry.id`, compiling it with `compile` at most once across every
  // process that shares the file: the first takes a lease (key, pid, host, started) in a short
  // write transaction, compiles outside it, stores the result and releases the lease; the
  // others wait for the cubin, and take the lease over if its holder died or it is older than
  // the lease timeout. `compiled` (optional) is set to whether this call compiled.
  virtual Status get_or_compile(const KernelEntry& entry, const CompileFn& compile,
                                std::vector<uint8_t>* cubin, bool* compiled = nullptr) = 0;

  // The maintenance calls fail when the file fails under them (a damaged file names the remedy);
  // the store is memory-only from then on, as after any failure of the file.
  virtual Status list(std::vector<KernelEntry>* entries) = 0;
  virtual Status stats(StoreStats* stats) = 0;
  virtual VerifyReport verify() = 0;  // checks every blob; deletes none
  // Removes entries whose fingerprint is not `current_fingerprint` (when non-empty), then evicts
  // least-recently-used entries until the cubins total at most max_bytes (< 0: no size bound).
  virtual Status gc(int64_t max_bytes, const std::string& current_fingerprint,
                    GcReport* report) = 0;

  virtual Status put_tuning(const TuningRow& row) = 0;
  virtual std::optional<TuningRow> find_tuning(uint64_t problem_id, int batch_bucket,
                                               const std::string& device_name, int sm_count,
                                               int driver_version) = 0;
};

// The default cache file: $XDG_CACHE_HOME/smla/cache.sqlite, else ~/.cache/smla/cache.sqlite;
// "" (memory only) when neither variable is set.
std::string default_cache_path();

}  // namespace smla
