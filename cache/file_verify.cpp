#include "cache/file_verify.h"

#include <memory>

#include "cache/kernel_table.h"
#include "cache/schema.h"

namespace smla {

Status verify_database(SqliteDb& db, const std::string& label_prefix, VerifyReport* report) {
  SMLA_TRY(KernelTable(db).verify(label_prefix, report));
  // The blobs' checksums say nothing about the b-tree pages around them.
  SqliteStatement quick_check;
  SMLA_TRY(db.prepare("PRAGMA quick_check", &quick_check));
  for (;;) {
    bool has_row = false;
    SMLA_TRY(quick_check.step(&has_row));
    if (!has_row) return Status::ok();
    if (quick_check.column_text(0) != "ok") {
      report->bad.push_back(label_prefix + "database: " + quick_check.column_text(0));
    }
  }
}

Status verify_cache_file(const std::string& path, VerifyReport* report) {
  std::unique_ptr<SqliteDb> db;
  int version = 0;
  Status status = SqliteDb::open(path, SQLITE_OPEN_READONLY, &db);
  if (status) status = read_schema_version(*db, &version);
  if (!status) {  // not even the header reads as a database's
    report->bad.push_back("database: " + status.message());
    return Status::ok();
  }
  if (version == 0) {
    bool foreign = false;
    SMLA_TRY(has_tables(*db, &foreign));
    if (!foreign) return Status::ok();  // an empty file: a cache nothing was written to
    return error(SMLA_ERR_CACHE,
                 "{} is an SQLite database of another program (tables, but not "
                 "smla's)",
                 path);
  }
  if (version != kSchemaVersion) {
    return error(SMLA_ERR_CACHE, "{} has schema version {}; this build checks version {}", path,
                 version, kSchemaVersion);
  }
  status = verify_database(*db, "", report);
  if (!status) report->bad.push_back("database: " + status.message());
  return Status::ok();
}

}  // namespace smla
