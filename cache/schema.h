// The cache file's schema: its version lives in `meta`, and migrations bring an older file up to
// kSchemaVersion in order. A newer file is never touched (a newer smla may still be using it).
#pragma once

#include "cache/sqlite_db.h"
#include "support/status.h"

namespace smla {

constexpr int kSchemaVersion = 1;

// What a file holds, as far as smla is concerned.
struct SchemaState {
  int version = 0;       // smla's schema version; 0 without it (a new or empty file)
  bool foreign = false;  // tables, but not smla's schema: another program's database
};

// Reads the state in one snapshot (a read transaction of its own unless one is open), so that
// another process's half-created schema is never seen as a foreign database. Reads only.
Status read_schema_state(SqliteDb& db, SchemaState* state);

// Brings the file up to kSchemaVersion: every migration above its version, in one write
// transaction. The state is read again inside it, because another process may have migrated the
// file meanwhile. Fails, and changes nothing at all, if the file is newer than kSchemaVersion
// or another program's database.
Status migrate_schema(SqliteDb& db);

}  // namespace smla
