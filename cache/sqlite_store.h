// The user cache: one SQLite file in WAL mode shared by every process of the machine. Writes are
// short BEGIN IMMEDIATE transactions; compiling happens outside them, under a lease (see
// lease_table.h). If the file fails after it was opened (disk full, locked past busy_timeout,
// gone read-only), the store warns once and keeps kernels in memory from then on: a cache
// failure never fails a call.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cache/cubin_store.h"
#include "cache/lease_locks.h"
#include "cache/lease_table.h"
#include "cache/memory_store.h"
#include "cache/sqlite_db.h"

namespace smla {

class SqliteCubinStore final : public CubinStore {
 public:
  // Creates the file and its directory if needed and brings the schema up to date. Fails, with
  // the reason, when the file cannot serve as a writable cache (the caller degrades to memory).
  static Status open(const Options& options, const Logger& log, std::unique_ptr<CubinStore>* store);

  bool persistent() const override;
  std::string path() const override;

  std::optional<std::vector<uint8_t>> find(uint64_t id) override;
  Status get_or_compile(const KernelEntry& entry, const CompileFn& compile,
                        std::vector<uint8_t>* cubin, bool* compiled = nullptr) override;

  Status list(std::vector<KernelEntry>* entries) override;
  Status stats(StoreStats* stats) override;
  VerifyReport verify() override;
  Status gc(int64_t max_bytes, const std::string& current_fingerprint, GcReport* report) override;

  Status put_tuning(const TuningRow& row) override;
  std::optional<TuningRow> find_tuning(uint64_t problem_id, int batch_bucket,
                                       const std::string& device_name, int sm_count,
                                       int driver_version) override;

 private:
  SqliteCubinStore(std::unique_ptr<SqliteDb> db, std::unique_ptr<LeaseLocks> lease_locks,
                   const Options& options, const Logger& log)
      : db_(std::move(db)), lease_locks_(std::move(lease_locks)), options_(options), log_(log) {}

  // What one lease attempt found (see get_or_compile).
  enum class LeaseStep { kCubinStored, kMine, kWait, kFileFailed };
  LeaseStep take_lease(const KernelEntry& entry);
  // Compiles under this process's lease and stores the cubin (and drops the lease) in one
  // transaction; a failed compile drops the lease so the next caller compiles.
  Status compile_under_lease(const KernelEntry& entry, const CompileFn& compile,
                             std::vector<uint8_t>* cubin, bool* compiled);

  // Requires mutex_ and an open file.
  std::optional<std::vector<uint8_t>> find_locked(uint64_t id);
  void touch_locked(uint64_t id);
  LeaseTable leases_locked();
  // Requires mutex_: warns once, gives up this process's leases and closes the file; the store
  // is memory-only from then on. Returns `why` as reported (with the remedy if it is damage).
  Status degrade_locked(const Status& why);

  mutable std::mutex mutex_;  // one connection: multi-statement transactions must not interleave
  std::unique_ptr<SqliteDb> db_;             // null once the file failed
  std::unique_ptr<LeaseLocks> lease_locks_;  // this store's leases; null once the file failed
  const Options options_;
  const Logger& log_;
  MemoryCubinStore memory_;  // used once db_ is null
};

}  // namespace smla
