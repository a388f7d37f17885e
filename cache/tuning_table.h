// The `tuning` table of one cache file: the fastest measured configuration per (problem, batch
// bucket, device name, SM count, driver version). Writes run inside the caller's transaction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cache/cubin_store.h"
#include "cache/sqlite_db.h"

namespace smla {

class TuningTable {
 public:
  explicit TuningTable(SqliteDb& db) : db_(db) {}

  // Replaces the row with the same lookup tuple: the newest measurement wins.
  Status put(const TuningRow& row);
  Status find(uint64_t problem_id, int batch_bucket, const std::string& device_name, int sm_count,
              int driver_version, std::optional<TuningRow>* row);
  Status count(int64_t* rows);
  // Every row, appended as far as the scan gets (a scan that fails keeps the rows before it).
  Status list(std::vector<TuningRow>* rows);

 private:
  SqliteDb& db_;
};

}  // namespace smla
