// The optional system cache (a read-only file shipped prewarmed, docs/design.md) in front of the
// user store. Kernels are looked up there first; nothing in it is ever written, not even hits.
// Maintenance (stats, gc, tuning writes) acts on the user store; verify checks both.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cache/cubin_store.h"
#include "cache/sqlite_db.h"

namespace smla {

class LayeredCubinStore final : public CubinStore {
 public:
  // Opens a system cache read-only; fails if it cannot be read or is not at this build's schema
  // version (it cannot be migrated).
  static Status open_system_cache(const std::string& path, int busy_timeout_ms,
                                  std::unique_ptr<SqliteDb>* system);
  // The totals of a file opened as a system cache is (read-only, creating nothing beside it),
  // with its path and persistent false: `smla cache stats` of a file this user may not write.
  static Status system_cache_stats(const std::string& path, int busy_timeout_ms, StoreStats* stats);

  LayeredCubinStore(std::unique_ptr<SqliteDb> system, std::unique_ptr<CubinStore> user,
                    const Logger& log)
      : system_(std::move(system)), user_(std::move(user)), log_(log) {}

  bool persistent() const override { return user_->persistent(); }
  std::string path() const override { return user_->path(); }

  std::optional<std::vector<uint8_t>> find(uint64_t id) override;
  Status get_or_compile(const KernelEntry& entry, const CompileFn& compile,
                        std::vector<uint8_t>* cubin, bool* compiled = nullptr) override;

  std::vector<KernelEntry> list() override;
  StoreStats stats() override { return user_->stats(); }
  VerifyReport verify() override;
  GcReport gc(int64_t max_bytes, const std::string& current_fingerprint) override {
    return user_->gc(max_bytes, current_fingerprint);
  }

  Status put_tuning(const TuningRow& row) override { return user_->put_tuning(row); }
  // The user's rows first: `smla tune` run on this machine is newer than what was shipped.
  std::optional<TuningRow> find_tuning(uint64_t problem_id, int batch_bucket,
                                       const std::string& device_name, int sm_count,
                                       int driver_version) override;

 private:
  std::optional<std::vector<uint8_t>> find_in_system(uint64_t id);
  // Requires mutex_: warns once and stops consulting the system cache.
  void drop_system_locked(const Status& why);

  std::mutex mutex_;                   // guards the system connection and bad_system_ids_
  std::unique_ptr<SqliteDb> system_;   // null once it failed
  std::set<uint64_t> bad_system_ids_;  // failed their check: warned once, skipped after
  std::unique_ptr<CubinStore> user_;
  const Logger& log_;
};

}  // namespace smla
