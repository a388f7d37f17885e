#include "cache/layered_store.h"

#include <utility>

#include "cache/file_size.h"
#include "cache/file_verify.h"
#include "cache/kernel_table.h"
#include "cache/schema.h"
#include "cache/tuning_table.h"

namespace smla {

Status LayeredCubinStore::open_read_only(const std::string& path, int busy_timeout_ms,
                                         std::unique_ptr<SqliteDb>* read_only) {
  std::unique_ptr<SqliteDb> db;
  // NOTE: immutable, because a shipped cache sits in a read-only directory, where SQLite
  // cannot create the -shm file a reader of a WAL-mode file (what cache build writes) needs.
  SMLA_TRY(SqliteDb::open_immutable(path, &db));
  db->set_busy_timeout(busy_timeout_ms);
  SchemaState state;
  const Status read = read_schema_state(*db, &state);
  if (!read) return reported_failure(*db, read);
  if (state.version != kSchemaVersion) {
    return error(SMLA_ERR_CACHE, "{} has schema version {}, this build reads {}", path,
                 state.version, kSchemaVersion);
  }
  *read_only = std::move(db);
  return ok_status();
}

Status LayeredCubinStore::read_only_stats(const std::string& path, int busy_timeout_ms,
                                          StoreStats* stats) {
  std::unique_ptr<SqliteDb> db;
  SMLA_TRY(open_read_only(path, busy_timeout_ms, &db));
  *stats = StoreStats();
  Status status = KernelTable(*db).totals(&stats->kernels, &stats->cubin_bytes, &stats->hits);
  if (status) status = TuningTable(*db).count(&stats->tuning_rows);
  if (!status) return reported_failure(*db, status);
  stats->file_bytes = file_size_or_zero(path);
  stats->path = path;
  return ok_status();
}

Status LayeredCubinStore::drop_system_locked(const Status& failure) {
  const Status why = reported_failure(*system_, failure);
  log_.warn("{} {}: {}; no longer consulted", name_, system_->path(), why.message());
  system_.reset();
  return why;
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
    log_.warn("{} {}: the cubin of {} failed its xxh64 check; compiling it again", name_,
              system_->path(), read.entry.key_text);
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

Status LayeredCubinStore::list(std::vector<KernelEntry>* entries) {
  entries->clear();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (system_ != nullptr) {
      Status status = KernelTable(*system_).list(origin_, entries);
      if (!status) return drop_system_locked(status);
    }
  }
  std::vector<KernelEntry> user_entries;
  SMLA_TRY(user_->list(&user_entries));
  entries->insert(entries->end(), user_entries.begin(), user_entries.end());
  return ok_status();
}

VerifyReport LayeredCubinStore::verify() {
  VerifyReport report = user_->verify();
  std::lock_guard<std::mutex> lock(mutex_);
  if (system_ != nullptr) {
    // The user's own file reads as `smla cache verify` of it; a system cache's lines say so.
    const std::string label = origin_ == "user" ? "" : origin_ + ": ";
    Status status = verify_database(*system_, label, &report);
    if (!status) {
      report.bad.push_back(label + "database: " + drop_system_locked(status).message());
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
