// The cache file's schema: its version lives in `meta`, and migrations bring an older file up to
// kSchemaVersion in order. A newer file is never touched (a newer smla may still be using it).
#pragma once

#include "cache/sqlite_db.h"
#include "support/status.h"

namespace smla {

constexpr int kSchemaVersion = 1;

// The file's schema version; 0 for a file without smla's tables (new or empty). Reads only.
Status read_schema_version(SqliteDb& db, int* version);

// Whether the file has any table (a file without smla's schema and with tables belongs to
// another program). Reads only.
Status has_tables(SqliteDb& db, bool* any);

// Applies every migration above the file's version in one write transaction. The version is
// read again inside it, because another process may have migrated the file meanwhile. Fails
// (and changes nothing) if the file turns out to be newer than kSchemaVersion, or to be another
// program's database.
Status migrate_schema(SqliteDb& db);

}  // namespace smla
