#include "cache/file_repair.h"

#include <cstdio>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "cache/cubin_store.h"
#include "cache/file_verify.h"
#include "cache/kernel_table.h"
#include "cache/schema.h"
#include "cache/sqlite_db.h"
#include "cache/tuning_table.h"

namespace smla {

namespace {

// What could be read from the damaged file.
struct Salvage {
  std::vector<CubinRead> kernels;
  std::vector<TuningRow> tuning;
};

// The kernel ids reachable by a rowid scan from the low end and then from the high end: a
// damaged page stops one scan, and the other recovers the rows past it.
std::vector<uint64_t> reachable_ids(SqliteDb& db, bool* unreachable) {
  std::vector<uint64_t> ascending;
  const bool ascending_done = static_cast<bool>(KernelTable(db).ids(false, &ascending));
  *unreachable = !ascending_done;
  if (ascending_done) return ascending;
  std::vector<uint64_t> descending;
  KernelTable(db).ids(true, &descending);
  std::set<uint64_t> ids(ascending.begin(), ascending.end());
  ids.insert(descending.begin(), descending.end());
  return std::vector<uint64_t>(ids.begin(), ids.end());
}

Salvage salvage(SqliteDb& db, RepairReport* report) {
  Salvage found;
  for (uint64_t id : reachable_ids(db, &report->rows_unreachable)) {
    CubinRead read;
    if (KernelTable(db).read(id, &read) && read.result == CubinRead::Result::kGood) {
      found.kernels.push_back(std::move(read));
    } else {
      ++report->kernels_dropped;
    }
  }
  TuningTable(db).list(&found.tuning);  // the rows before a damaged page, if any
  return found;
}

Status write_clean_file(const std::string& path, const Salvage& found) {
  std::remove(path.c_str());
  std::unique_ptr<SqliteDb> db;
  SMLA_TRY(SqliteDb::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &db));
  SMLA_TRY(migrate_schema(*db));
  return with_write_transaction(*db, [&]() -> Status {
    for (const CubinRead& kernel : found.kernels) SMLA_TRY(KernelTable(*db).restore(kernel));
    for (const TuningRow& row : found.tuning) SMLA_TRY(TuningTable(*db).put(row));
    return ok_status();
  });
}

}  // namespace

Status repair_cache_file(const std::string& path, int busy_timeout_ms, RepairReport* report) {
  *report = RepairReport();
  if (!may_write_cache_file(path)) {
    return error(SMLA_ERR_CACHE,
                 "cannot repair {}: this user may not write it or its directory; repair it as "
                 "its owner",
                 path);
  }
  Salvage found;
  {
    // Read-only: nothing is written into the damaged file (SQLite would otherwise complete or
    // checkpoint a log into it).
    std::unique_ptr<SqliteDb> damaged;
    SMLA_TRY(SqliteDb::open(path, SQLITE_OPEN_READONLY, &damaged));
    damaged->set_busy_timeout(busy_timeout_ms);
    found = salvage(*damaged, report);
  }
  const std::string repaired = path + ".repair";
  if (Status written = write_clean_file(repaired, found); !written) {
    std::remove(repaired.c_str());
    return error(SMLA_ERR_CACHE, "cannot write the repaired file {}: {}", repaired,
                 written.message());
  }
  // The damaged file's log and shared memory belong to it, not to the new file.
  for (const char* suffix : {"-wal", "-shm"}) std::remove((path + suffix).c_str());
  if (std::rename(repaired.c_str(), path.c_str()) != 0) {
    std::remove(repaired.c_str());
    return error(SMLA_ERR_CACHE, "cannot replace {} with the repaired file", path);
  }
  report->kernels_kept = static_cast<int64_t>(found.kernels.size());
  report->tuning_rows_kept = static_cast<int64_t>(found.tuning.size());
  return ok_status();
}

}  // namespace smla
