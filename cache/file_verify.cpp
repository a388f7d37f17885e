#include "cache/file_verify.h"

#include <memory>
#include <string>

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

namespace {

// SQLite's verdict that the bytes are not a sound database, as opposed to an access problem.
bool is_damage(int sqlite_code) {
  const int primary = sqlite_code & 0xff;
  return primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT;
}

// A file this user may write is opened as any connection is, but query_only: SQLite's -wal and
// -shm files then come and go as usual (a read-only connection would leave them behind, owned
// by whoever verified). A write-protected file is opened read-only.
Status open_without_writing(const std::string& path, int busy_timeout_ms,
                            std::unique_ptr<SqliteDb>* db) {
  SMLA_TRY(SqliteDb::open(path, SQLITE_OPEN_READWRITE, db));
  (*db)->set_busy_timeout(busy_timeout_ms);
  if (!(*db)->read_only()) SMLA_TRY((*db)->exec("PRAGMA query_only = 1"));
  return Status::ok();
}

// What a failure to read means: damage goes into the report, anything else is an error.
Status classify(const SqliteDb& db, const Status& failure, VerifyReport* report) {
  if (!is_damage(db.last_failure())) {
    return error(SMLA_ERR_CACHE, "cannot read {}: {}", db.path(), failure.message());
  }
  report->bad.push_back("database: " + failure.message());
  return Status::ok();
}

}  // namespace

Status verify_cache_file(const std::string& path, int busy_timeout_ms, VerifyReport* report) {
  std::unique_ptr<SqliteDb> db;
  SMLA_TRY(open_without_writing(path, busy_timeout_ms, &db));
  SchemaState state;
  Status status = read_schema_state(*db, &state);
  const int primary = db->last_failure() & 0xff;
  if (!status && db->read_only() && (primary == SQLITE_READONLY || primary == SQLITE_CANTOPEN)) {
    // NOTE: a WAL file in a directory this user cannot write (SQLITE_READONLY_DIRECTORY): SQLite
    // cannot create the -shm file its readers need. Read as immutable, as the system cache is.
    SMLA_TRY(SqliteDb::open_immutable(path, &db));
    status = read_schema_state(*db, &state);
  }
  if (!status) return classify(*db, status, report);
  if (state.foreign) {
    return error(SMLA_ERR_CACHE, "{} is an SQLite database of another program (tables, but not "
                 "smla's)", path);
  }
  if (state.version == 0) return Status::ok();  // an empty file: a cache nothing was written to
  if (state.version != kSchemaVersion) {
    return error(SMLA_ERR_CACHE, "{} has schema version {}; this build checks version {}", path,
                 state.version, kSchemaVersion);
  }
  status = verify_database(*db, "", report);
  return status ? status : classify(*db, status, report);
}

}  // namespace smla
