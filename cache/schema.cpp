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
-- One row per kernel being compiled: the process that compiles it (docs/design.md).
CREATE TABLE leases (
  id INTEGER PRIMARY KEY,
  pid INTEGER NOT NULL,
  host TEXT NOT NULL,
  started INTEGER NOT NULL
);
)sql"},
};

}  // namespace

namespace {

// Reads inside the open transaction, so every query sees the same snapshot.
Status read_state_in_transaction(SqliteDb& db, SchemaState* state) {
  *state = SchemaState{};
  std::string tables;
  SMLA_TRY(db.query_text("SELECT count(*) FROM sqlite_master WHERE type = 'table'", &tables));
  // A `meta` table without smla's columns is another program's table of that name.
  std::string meta_columns;
  SMLA_TRY(db.query_text(
      "SELECT count(*) FROM pragma_table_info('meta') WHERE name IN ('name', 'value')",
      &meta_columns));
  std::string text;
  if (meta_columns == "2") {
    SMLA_TRY(db.query_text("SELECT value FROM meta WHERE name = 'schema_version'", &text));
  }
  if (text.empty()) {
    state->foreign = tables != "0";
    return ok_status();
  }
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), state->version);
  if (ec != std::errc() || end != text.data() + text.size() || state->version <= 0) {
    return error(SMLA_ERR_CACHE, "meta.schema_version '{}' is not a schema version", text);
  }
  return ok_status();
}

// Why smla must leave the file alone, or ok.
Status refuse_unless_ours(const SchemaState& state) {
  if (state.version > kSchemaVersion) {
    return error(SMLA_ERR_CACHE,
                 "its schema version {} is newer than this build's {}; left untouched",
                 state.version, kSchemaVersion);
  }
  if (state.foreign) {
    return Status(SMLA_ERR_CACHE,
                  "it is an SQLite database of another program (tables, but not smla's); left "
                  "untouched (if it was smla's cache, another database's -wal file beside it made "
                  "it so: remove both)");
  }
  return ok_status();
}

}  // namespace

Status read_schema_state(SqliteDb& db, SchemaState* state) {
  if (db.in_transaction()) return read_state_in_transaction(db, state);
  return with_read_transaction(db, [&] { return read_state_in_transaction(db, state); });
}

Status migrate_schema(SqliteDb& db) {
  SchemaState state;
  SMLA_TRY(read_schema_state(db, &state));
  SMLA_TRY(refuse_unless_ours(state));
  if (state.version == kSchemaVersion) return ok_status();
  // Takes effect only when the tables are created; lets gc give freed pages back to the file
  // system without a full VACUUM. Only after the check: on another program's file that already
  // vacuums, it would switch the mode.
  if (state.version == 0) SMLA_TRY(db.exec("PRAGMA auto_vacuum = INCREMENTAL"));
  return with_write_transaction(db, [&]() -> Status {
    // NOTE: read again under the write lock: processes that open a new file together would
    // otherwise create the tables twice.
    SMLA_TRY(read_state_in_transaction(db, &state));
    SMLA_TRY(refuse_unless_ours(state));
    for (const Migration& migration : kMigrations) {
      if (migration.version <= state.version) continue;
      SMLA_TRY(db.exec(migration.sql));
      SqliteStatement set_version;
      SMLA_TRY(db.prepare("INSERT OR REPLACE INTO meta (name, value) VALUES ('schema_version', ?)",
                          &set_version));
      SMLA_TRY(set_version.bind(1, std::to_string(migration.version)).run());
    }
    return ok_status();
  });
}

}  // namespace smla
