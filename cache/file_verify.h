// Checking a cache file's integrity: every cubin against its xxh64, then SQLite's quick_check of
// the pages around them. `smla cache verify` checks a file without changing its content, so
// that write-protected and shipped caches can be checked and nothing is migrated or repaired.
#pragma once

#include <string>

#include "cache/cubin_store.h"
#include "cache/sqlite_db.h"

namespace smla {

// Adds what is wrong in `db` to `report` ("database: ..." for SQLite's findings); the returned
// status is a failure to read the file at all.
Status verify_database(SqliteDb& db, const std::string& label_prefix, VerifyReport* report);

// The failure to report for a file SQLite found damaged (`what`, see SqliteDb::damaged): it
// names the file and the remedy, so that every reader of a damaged cache says the same.
Status damaged_file_error(const std::string& path, const Status& what);
// `failure` of an operation on `db` as it is reported: damaged_file_error when SQLite found the
// file damaged, else as it is.
Status reported_failure(const SqliteDb& db, const Status& failure);

// Whether this user may open the cache file at `path` as a writer: it may write the file and
// its directory, and the file is not write-protected (root may write anything, but SQLite's
// -wal and -shm of a 0444 file would take its bits and lock out its owner later).
bool may_write_cache_file(const std::string& path);

// What verify_cache_file checks: every cubin against its xxh64 and the pages (`smla cache
// verify`), or only SQLite's pages (a quick test for damage before reading a file's listing).
enum class VerifyScope { kCubinsAndPages, kPages };

// Verifies the file at `path` without changing its content, waiting up to `busy_timeout_ms`
// behind a writer. Bytes SQLite finds are not a sound database are damage (reported as such); a
// file that cannot be read (permissions, a directory, I/O, a write in progress that only a
// writer can complete) or is not a cache of this schema version is an error. A file this user
// may not write is read without creating any file beside it.
Status verify_cache_file(const std::string& path, int busy_timeout_ms, VerifyReport* report,
                         VerifyScope scope = VerifyScope::kCubinsAndPages);

}  // namespace smla
