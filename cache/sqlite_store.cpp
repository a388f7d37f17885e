#include "cache/sqlite_store.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <system_error>
#include <thread>
#include <utility>

#include "cache/file_size.h"
#include "cache/file_verify.h"
#include "cache/kernel_table.h"
#include "cache/schema.h"
#include "cache/tuning_table.h"

namespace smla {

namespace {

int64_t unix_now() { return static_cast<int64_t>(std::time(nullptr)); }

// Recording a hit must not stall a lookup behind another process's write: it waits this long
// for the write lock and otherwise gives up (the hit is bookkeeping, the cubin is already read).
constexpr int kTouchBusyTimeoutMs = 10;
// Giving up the file should not stall as long as the failure that caused it may have.
constexpr int kDegradeBusyTimeoutMs = 1000;

// A CompileFn that hands over a cubin compiled already (to keep it in memory after a failure).
CompileFn provide(std::vector<uint8_t> cubin, double compile_ms) {
  return [cubin = std::move(cubin), compile_ms](std::vector<uint8_t>* out, double* ms) {
    *out = cubin;
    *ms = compile_ms;
    return ok_status();
  };
}

}  // namespace

Status SqliteCubinStore::open(const Options& options, const Logger& log,
                              std::unique_ptr<CubinStore>* store) {
  std::filesystem::path parent = std::filesystem::path(options.path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) {
      return error(SMLA_ERR_CACHE, "cannot create directory {}: {}", parent.string(), ec.message());
    }
  }
  std::unique_ptr<SqliteDb> db;
  SMLA_TRY(SqliteDb::open(options.path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &db));
  if (db->read_only()) return error(SMLA_ERR_CACHE, "the file is read-only");
  db->set_busy_timeout(options.busy_timeout_ms);
  // Before anything writes: a newer file or another program's database is left as it is.
  Status status = migrate_schema(*db);
  if (status) status = db->switch_to_wal(options.busy_timeout_ms);
  // In WAL mode NORMAL cannot corrupt the file; a power cut may lose the last few kernels,
  // which are recompiled.
  if (status) status = db->exec("PRAGMA synchronous = NORMAL");
  if (!status) return reported_failure(*db, status);
  auto lease_locks = std::make_unique<LeaseLocks>(options.path);
  if (!lease_locks->can_lock()) {
    log.warn(
        "cache {}: cannot write {}: should this process die while compiling, others wait "
        "for its leases' timeout ({} s)",
        options.path, lease_locks_path(options.path), options.lease_timeout_s);
  }
  store->reset(new SqliteCubinStore(std::move(db), std::move(lease_locks), options, log));
  return ok_status();
}

bool SqliteCubinStore::persistent() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return db_ != nullptr;
}

std::string SqliteCubinStore::path() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return db_ != nullptr ? options_.path : std::string();
}

Status SqliteCubinStore::degrade_locked(const Status& failure) {
  const Status why = reported_failure(*db_, failure);
  log_.warn("cache {}: {}; keeping kernels in memory only from now on", options_.path,
            why.message());
  // Leases this process holds would make other processes wait for a cubin that never comes.
  db_->set_busy_timeout(std::min(options_.busy_timeout_ms, kDegradeBusyTimeoutMs));
  with_write_transaction(*db_, [&] { return leases_locked().release_all(); });
  db_.reset();
  lease_locks_.reset();
  return why;
}

LeaseTable SqliteCubinStore::leases_locked() {
  return LeaseTable(*db_, options_.lease_timeout_s, *lease_locks_);
}

void SqliteCubinStore::touch_locked(uint64_t id) {
  db_->set_busy_timeout(kTouchBusyTimeoutMs);
  Status status =
      with_write_transaction(*db_, [&] { return KernelTable(*db_).touch(id, unix_now()); });
  db_->set_busy_timeout(options_.busy_timeout_ms);
  if (!status) log_.debug("cache {}: hit not recorded: {}", options_.path, status.message());
}

std::optional<std::vector<uint8_t>> SqliteCubinStore::find_locked(uint64_t id) {
  KernelTable kernels(*db_);
  CubinRead read;
  Status status = kernels.read(id, &read);
  if (!status) {
    degrade_locked(status);
    return std::nullopt;
  }
  switch (read.result) {
    case CubinRead::Result::kMissing:
      return std::nullopt;
    case CubinRead::Result::kCorrupt:
      log_.warn("cache {}: the cubin of {} failed its xxh64 check; deleted, it will be rebuilt",
                options_.path, read.entry.key_text);
      status = with_write_transaction(*db_, [&] { return kernels.delete_if_corrupt(id); });
      if (!status) degrade_locked(status);
      return std::nullopt;
    case CubinRead::Result::kGood:
      touch_locked(id);
      return std::move(read.cubin);
  }
  return std::nullopt;
}

std::optional<std::vector<uint8_t>> SqliteCubinStore::find(uint64_t id) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // Memory holds nothing until the file fails, so a failure inside find_locked is a miss.
    if (db_ != nullptr) return find_locked(id);
  }
  return memory_.find(id);
}

SqliteCubinStore::LeaseStep SqliteCubinStore::take_lease(const KernelEntry& entry) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (db_ == nullptr) return LeaseStep::kFileFailed;
  bool stored = false;
  LeaseState state = LeaseState::kHeld;
  LeaseHolder holder;
  std::string stale_reason;
  // The cubin is looked for again inside the transaction: its compiler may have stored it and
  // dropped its lease since this process's lookup missed.
  Status status = with_write_transaction(*db_, [&]() -> Status {
    SMLA_TRY(KernelTable(*db_).contains(entry.id, &stored));
    if (stored) return ok_status();
    return leases_locked().acquire(entry.id, unix_now(), &state, &holder, &stale_reason);
  });
  if (!status) {
    degrade_locked(status);
    return LeaseStep::kFileFailed;
  }
  if (stored) return LeaseStep::kCubinStored;
  if (state == LeaseState::kHeld) return LeaseStep::kWait;
  if (state == LeaseState::kTakenOver) {
    log_.warn("cache {}: took over the compile lease of {} from pid {} on {}: {}", options_.path,
              entry.key_text, holder.pid, holder.host, stale_reason);
  }
  return LeaseStep::kMine;
}

Status SqliteCubinStore::get_or_compile(const KernelEntry& entry, const CompileFn& compile,
                                        std::vector<uint8_t>* cubin, bool* compiled) {
  if (compiled != nullptr) *compiled = false;
  for (;;) {
    if (std::optional<std::vector<uint8_t>> hit = find(entry.id)) {
      *cubin = std::move(*hit);
      return ok_status();
    }
    switch (take_lease(entry)) {
      case LeaseStep::kCubinStored:
        continue;
      case LeaseStep::kWait:
        // The holder stores the cubin, fails (its lease goes and this process takes it), or
        // dies or times out (its lease goes stale and this process takes it over).
        std::this_thread::sleep_for(std::chrono::milliseconds(options_.lease_poll_ms));
        continue;
      case LeaseStep::kMine:
        return compile_under_lease(entry, compile, cubin, compiled);
      case LeaseStep::kFileFailed:
        return memory_.get_or_compile(entry, compile, cubin, compiled);
    }
  }
}

Status SqliteCubinStore::compile_under_lease(const KernelEntry& entry, const CompileFn& compile,
                                             std::vector<uint8_t>* cubin, bool* compiled) {
  std::vector<uint8_t> built;
  double compile_ms = 0;
  Status compile_status = run_compile(compile, &built, &compile_ms);

  std::unique_lock<std::mutex> lock(mutex_);
  if (db_ != nullptr) {
    Status status = with_write_transaction(*db_, [&]() -> Status {
      if (compile_status) SMLA_TRY(KernelTable(*db_).store(entry, built, compile_ms, unix_now()));
      return leases_locked().release(entry.id);
    });
    if (status) {
      if (!compile_status) return compile_status;
      *cubin = std::move(built);
      if (compiled != nullptr) *compiled = true;
      return ok_status();
    }
    degrade_locked(status);
  }
  lock.unlock();
  if (!compile_status) return compile_status;
  // The file failed while this process compiled: keep the cubin in memory instead.
  SMLA_TRY(memory_.get_or_compile(entry, provide(std::move(built), compile_ms), cubin));
  if (compiled != nullptr) *compiled = true;
  return ok_status();
}

Status SqliteCubinStore::list(std::vector<KernelEntry>* entries) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (db_ != nullptr) {
      entries->clear();
      Status status = KernelTable(*db_).list("user", entries);
      return status ? status : degrade_locked(status);
    }
  }
  return memory_.list(entries);
}

Status SqliteCubinStore::stats(StoreStats* stats) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (db_ != nullptr) {
      *stats = StoreStats();
      Status status = KernelTable(*db_).totals(&stats->kernels, &stats->cubin_bytes, &stats->hits);
      if (status) status = TuningTable(*db_).count(&stats->tuning_rows);
      if (!status) return degrade_locked(status);
      // What the cache occupies on disk: the database and its write-ahead log.
      stats->file_bytes =
          file_size_or_zero(options_.path) + file_size_or_zero(options_.path + "-wal");
      stats->persistent = true;
      stats->path = options_.path;
      return status;
    }
  }
  return memory_.stats(stats);
}

VerifyReport SqliteCubinStore::verify() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (db_ != nullptr) {
      VerifyReport report;
      Status status = verify_database(*db_, "", &report);
      if (status) return report;
      report.bad.push_back("database: " + degrade_locked(status).message());
      return report;
    }
  }
  return memory_.verify();
}

Status SqliteCubinStore::gc(int64_t max_bytes, const std::string& current_fingerprint,
                            GcReport* gc_report) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (db_ != nullptr) {
      GcReport& report = *gc_report;
      report = GcReport();
      KernelTable kernels(*db_);
      Status status = with_write_transaction(*db_, [&]() -> Status {
        int64_t count = 0;
        int64_t hits = 0;
        SMLA_TRY(kernels.totals(&count, &report.bytes_before, &hits));
        if (!current_fingerprint.empty()) {
          int64_t stale = 0;
          SMLA_TRY(kernels.remove_other_fingerprints(current_fingerprint, &stale));
          report.removed += stale;
        }
        if (max_bytes >= 0) {
          int64_t evicted = 0;
          SMLA_TRY(kernels.evict_least_recently_used(max_bytes, &evicted));
          report.removed += evicted;
        }
        return kernels.totals(&count, &report.bytes_after, &hits);
      });
      // Give the freed pages back to the file system. They leave the database file at a
      // checkpoint; one that other connections keep from finishing is no failure of the file.
      if (status && report.removed > 0) {
        status =
            with_write_transaction(*db_, [&] { return db_->exec("PRAGMA incremental_vacuum"); });
        if (status) db_->exec("PRAGMA wal_checkpoint(TRUNCATE)");
      }
      return status ? status : degrade_locked(status);
    }
  }
  return memory_.gc(max_bytes, current_fingerprint, gc_report);
}

Status SqliteCubinStore::put_tuning(const TuningRow& row) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (db_ != nullptr) {
      Status status = with_write_transaction(*db_, [&] { return TuningTable(*db_).put(row); });
      if (status) return status;
      degrade_locked(status);
    }
  }
  return memory_.put_tuning(row);
}

std::optional<TuningRow> SqliteCubinStore::find_tuning(uint64_t problem_id, int batch_bucket,
                                                       const std::string& device_name, int sm_count,
                                                       int driver_version) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (db_ != nullptr) {
      std::optional<TuningRow> row;
      Status status = TuningTable(*db_).find(problem_id, batch_bucket, device_name, sm_count,
                                             driver_version, &row);
      if (status) return row;
      degrade_locked(status);
    }
  }
  return memory_.find_tuning(problem_id, batch_bucket, device_name, sm_count, driver_version);
}

}  // namespace smla
