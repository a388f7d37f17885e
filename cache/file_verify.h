// Checking a cache file's integrity: every cubin against its xxh64, then SQLite's quick_check of
// the pages around them. `smla cache verify` checks a file read-only, so that write-protected
// and shipped caches can be checked and nothing is created, migrated or repaired.
#pragma once

#include <string>

#include "cache/cubin_store.h"
#include "cache/sqlite_db.h"

namespace smla {

// Adds what is wrong in `db` to `report` ("database: ..." for SQLite's findings); the returned
// status is a failure to read the file at all.
Status verify_database(SqliteDb& db, const std::string& label_prefix, VerifyReport* report);

// Opens `path` read-only and verifies it. A file SQLite cannot read as a database is damage
// (reported as such); a readable file that is not a cache of this schema version is an error.
Status verify_cache_file(const std::string& path, VerifyReport* report);

}  // namespace smla
