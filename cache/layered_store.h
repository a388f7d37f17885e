// A read-only cache file in front of a writable store: the optional system cache (a file shipped
// prewarmed, docs/design.md) before the user cache, or a user cache file this user may not write
// before memory. Kernels are looked up there first; nothing in it is ever written, not even
// hits. Maintenance (stats, gc, tuning writes) acts on the store behind; list and verify see
// both.
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
  // Opens a cache file read-only, creating nothing beside it; fails if it cannot be read or is
  // not at this build's schema version (it cannot be migrated), a damaged file with the remedy.
  static Status open_read_only(const std::string& path, int busy_timeout_ms,
                               std::unique_ptr<SqliteDb>* db);
  // The totals of a file opened read-only, with its path and persistent false: `smla cache
  // stats` of a file this user may not write.
  static Status read_only_stats(const std::string& path, int busy_timeout_ms, StoreStats* stats);

  // `name` says what the read-only file is in warnings ("system cache", "cache"); `origin` is
  // its entries' origin in listings ("system", "user").
  LayeredCubinStore(std::unique_ptr<SqliteDb> read_only, std::string name, std::string origin,
                    std::unique_ptr<CubinStore> user, const Logger& log)
      : system_(std::move(read_only)),
        name_(std::move(name)),
        origin_(std::move(origin)),
        user_(std::move(user)),
        log_(log) {}

  bool persistent() const override { return user_->persistent(); }
  std::string path() const override { return user_->path(); }

  std::optional<std::vector<uint8_t>> find(uint64_t id) override;
  Status get_or_compile(const KernelEntry& entry, const CompileFn& compile,
                        std::vector<uint8_t>* cubin, bool* compiled = nullptr) override;

  Status list(std::vector<KernelEntry>* entries) override;
  Status stats(StoreStats* stats) override { return user_->stats(stats); }
  VerifyReport verify() override;
  Status gc(int64_t max_bytes, const std::string& current_fingerprint, GcReport* report) override {
    return user_->gc(max_bytes, current_fingerprint, report);
  }

  Status put_tuning(const TuningRow& row) override { return user_->put_tuning(row); }
  // The user's rows first: `smla tune` run on this machine is newer than what was shipped.
  std::optional<TuningRow> find_tuning(uint64_t problem_id, int batch_bucket,
                                       const std::string& device_name, int sm_count,
                                       int driver_version) override;

 private:
  std::optional<std::vector<uint8_t>> find_in_system(uint64_t id);
  // Requires mutex_: warns once and stops consulting the read-only file. Returns `why` as
  // reported (with the remedy if it is damage).
  Status drop_system_locked(const Status& why);

  std::mutex mutex_;                  // guards the read-only connection and bad_system_ids_
  std::unique_ptr<SqliteDb> system_;  // the read-only file; null once it failed
  const std::string name_;
  const std::string origin_;
  std::set<uint64_t> bad_system_ids_;  // failed their check: warned once, skipped after
  std::unique_ptr<CubinStore> user_;
  const Logger& log_;
};

}  // namespace smla
