#include "cache/layered_store.h"

#include <utility>

#include "cache/file_size.h"
#include "cache/file_verify.h"
#include "cache/kernel_table.h"
#include "cache/schema.h"
#include "cache/tuning_table.h"

namespace smla {

Status LayeredCubinStore::open_system_cache(const std::string& path, int busy_timeout_ms,
                                            std::unique_ptr<SqliteDb>* system) {
  std::unique_ptr<SqliteDb> db;
  // NOTE: immutable, because a shipped cache sits in a read-only directory, where SQLite
  // cannot create the -shm file a reader of a WAL-mode file (what cache build writes) needs.
  SMLA_TRY(SqliteDb::open_immutable(path, &db));
  db->set_busy_timeout(busy_timeout_ms);
  SchemaState state;
  SMLA_TRY(read_schema_state(*db, &state));
  if (state.version != kSchemaVersion) {
    return error(SMLA_ERR_CACHE, "its schema version is {}, this build reads {}", state.version,
                 kSchemaVersion);
  }
  *system = std::move(db);
  return ok_status();
}

Status LayeredCubinStore::system_cache_stats(const std::string& path, int busy_timeout_ms,
                                             StoreStats* stats) {
  std::unique_ptr<SqliteDb> db;
  SMLA_TRY(open_system_cache(path, busy_timeout_ms, &db));
  *stats = StoreStats();
  SMLA_TRY(KernelTable(*db).totals(&stats->kernels, &stats->cubin_bytes, &stats->hits));
  SMLA_TRY(TuningTable(*db).count(&stats->tuning_rows));
  stats->file_bytes = file_size_or_zero(path);
  stats->path = path;
  return ok_status();
}

void LayeredCubinStore::drop_system_locked(const Status& why) {
  log_.warn("system cache {}: {}; no longer consulted", system_->path(), why.message());
  system_.reset();
}

std::optional<std::vector<uint8_t>> LayeredCubinStore::find_in_system(uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (system_ == nullptr || bad_system_ids_.count(id) != 0) return std::nullopt;
  CubinRead read;
  Status status = KernelTable(*system_).read(id, &read);
  if (!status) {
    drop_system_locked(status);
    return std::nullopt;
  }
  if (read.result == CubinRead::Result::kCorrupt) {
    // Read-only: the entry stays; the user cache gets a good copy instead.
    log_.warn("system cache {}: the cubin of {} failed its xxh64 check; using the user cache",
              system_->path(), read.key_text);
    bad_system_ids_.insert(id);
  }
  if (read.result != CubinRead::Result::kGood) return std::nullopt;
  return std::move(read.cubin);
}

std::optional<std::vector<uint8_t>> LayeredCubinStore::find(uint64_t id) {
  if (std::optional<std::vector<uint8_t>> hit = find_in_system(id)) return hit;
  return user_->find(id);
}

Status LayeredCubinStore::get_or_compile(const KernelEntry& entry, const CompileFn& compile,
                                         std::vector<uint8_t>* cubin, bool* compiled) {
  if (std::optional<std::vector<uint8_t>> hit = find_in_system(entry.id)) {
    if (compiled != nullptr) *compiled = false;
    *cubin = std::move(*hit);
    return ok_status();
  }
  return user_->get_or_compile(entry, compile, cubin, compiled);
}

std::vector<KernelEntry> LayeredCubinStore::list() {
  std::vector<KernelEntry> entries;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (system_ != nullptr) {
      Status status = KernelTable(*system_).list("system", &entries);
      if (!status) drop_system_locked(status);
    }
  }
  std::vector<KernelEntry> user_entries = user_->list();
  entries.insert(entries.end(), user_entries.begin(), user_entries.end());
  return entries;
}

VerifyReport LayeredCubinStore::verify() {
  VerifyReport report = user_->verify();
  std::lock_guard<std::mutex> lock(mutex_);
  if (system_ != nullptr) {
    Status status = verify_database(*system_, "system: ", &report);
    if (!status) {
      report.bad.push_back("system: database: " + status.message());
      drop_system_locked(status);
    }
  }
  return report;
}

std::optional<TuningRow> LayeredCubinStore::find_tuning(uint64_t problem_id, int batch_bucket,
                                                        const std::string& device_name,
                                                        int sm_count, int driver_version) {
  if (std::optional<TuningRow> row =
          user_->find_tuning(problem_id, batch_bucket, device_name, sm_count, driver_version)) {
    return row;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (system_ == nullptr) return std::nullopt;
  std::optional<TuningRow> row;
  Status status = TuningTable(*system_).find(problem_id, batch_bucket, device_name, sm_count,
                                             driver_version, &row);
  if (!status) drop_system_locked(status);
  return row;
}

}  // namespace smla
