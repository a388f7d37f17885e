#include "cache/schema.h"

#include <charconv>
#include <string>

namespace smla {

namespace {

struct Migration {
  int version;  // the schema version the file has after this migration
  const char* sql;
};

// Append only: a released migration is never edited, a change is a new migration.
constexpr Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE meta (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
-- id is the kernel id (XXH3 of key text + fingerprint) as a signed 64-bit bit pattern.
CREATE TABLE kernels (
  id INTEGER PRIMARY KEY,
  key_text TEXT NOT NULL,
  arch TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  cubin BLOB NOT NULL,
  cubin_xxh64 INTEGER NOT NULL,
  compile_ms REAL NOT NULL,
  cubin_bytes INTEGER NOT NULL,
  created INTEGER NOT NULL,
  last_used INTEGER NOT NULL,
  hits INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX kernels_by_last_used ON kernels (last_used);
CREATE TABLE tuning (
  problem_id INTEGER NOT NULL,
  batch_bucket INTEGER NOT NULL,
  device_name TEXT NOT NULL,
  sm_count INTEGER NOT NULL,
  driver_version INTEGER NOT NULL,
  config_text TEXT NOT NULL,
  measured_us REAL NOT NULL,
  baseline_us REAL NOT NULL,
  created INTEGER NOT NULL,
  UNIQUE (problem_id, batch_bucket, device_name, sm_count, driver_version)
);
-- One row per kernel being compiled: the process that compiles it (DESIGN.md 4).
CREATE TABLE leases (
  id INTEGER PRIMARY KEY,
  pid INTEGER NOT NULL,
  host TEXT NOT NULL,
  started INTEGER NOT NULL
);
)sql"},
};

}  // namespace

Status read_schema_version(SqliteDb& db, int* version) {
  std::string has_meta;
  SMLA_TRY(db.query_text(
      "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'", &has_meta));
  if (has_meta == "0") {
    *version = 0;
    return Status::ok();
  }
  std::string text;
  SMLA_TRY(db.query_text("SELECT value FROM meta WHERE name = 'schema_version'", &text));
  if (text.empty()) {
    *version = 0;
    return Status::ok();
  }
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *version);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return error(SMLA_ERR_CACHE, "meta.schema_version '{}' is not a number", text);
  }
  return Status::ok();
}

Status has_tables(SqliteDb& db, bool* any) {
  std::string tables;
  SMLA_TRY(db.query_text("SELECT count(*) FROM sqlite_master WHERE type = 'table'", &tables));
  *any = tables != "0";
  return Status::ok();
}

Status migrate_schema(SqliteDb& db) {
  // Takes effect only when the tables are created (a no-op on an existing file); lets gc give
  // freed pages back to the file system without a full VACUUM.
  SMLA_TRY(db.exec("PRAGMA auto_vacuum = INCREMENTAL"));
  return with_write_transaction(db, [&]() -> Status {
    int version = 0;
    SMLA_TRY(read_schema_version(db, &version));
    if (version > kSchemaVersion) {
      return error(SMLA_ERR_CACHE, "schema version {} is newer than this build's {}", version,
                   kSchemaVersion);
    }
    // NOTE: decided here, under the write lock, not before it: processes that open a new file
    // together would otherwise see one another's half-read schema as a foreign database.
    bool foreign = false;
    if (version == 0) SMLA_TRY(has_tables(db, &foreign));
    if (foreign) {
      return Status(SMLA_ERR_CACHE,
                    "it is an SQLite database of another program (tables, but not smla's); left "
                    "untouched");
    }
    for (const Migration& migration : kMigrations) {
      if (migration.version <= version) continue;
      SMLA_TRY(db.exec(migration.sql));
      SqliteStatement set_version;
      SMLA_TRY(db.prepare("INSERT OR REPLACE INTO meta (name, value) VALUES ('schema_version', ?)",
                          &set_version));
      SMLA_TRY(set_version.bind(1, std::to_string(migration.version)).run());
    }
    return Status::ok();
  });
}

}  // namespace smla
