// A thin RAII layer over one SQLite connection and its prepared statements. Every failure is a
// Status (SMLA_ERR_CACHE) that names the SQL and SQLite's message, so callers can log it as is.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "support/status.h"

namespace smla {

class SqliteDb;

class SqliteStatement {
 public:
  SqliteStatement() = default;
  SqliteStatement(SqliteDb* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&& other) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  ~SqliteStatement();

  // Parameters are numbered from 1, as in SQLite. The bound text and blobs are copied.
  SqliteStatement& bind(int index, int64_t value);
  SqliteStatement& bind(int index, double value);
  SqliteStatement& bind(int index, const std::string& value);
  SqliteStatement& bind_blob(int index, const std::vector<uint8_t>& value);

  // Runs one step: *has_row says whether a result row is ready (false once done).
  Status step(bool* has_row);
  // Runs a statement that returns no rows.
  Status run();

  int64_t column_int64(int index) const;
  double column_double(int index) const;
  std::string column_text(int index) const;
  std::vector<uint8_t> column_blob(int index) const;

 private:
  Status fail(int rc) const;

  SqliteDb* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  int bind_rc_ = SQLITE_OK;  // the first failed bind, reported by the next step
};

class SqliteDb {
 public:
  // `flags` are sqlite3_open_v2 flags. A handle is created even when opening fails (SQLite's
  // rule), and closed here.
  static Status open(const std::string& path, int flags, std::unique_ptr<SqliteDb>* db);
  // Opens `path` read-only as a file nothing changes while it is open (SQLite's `immutable`):
  // no lock, no -wal or -shm file, so it reads from a read-only directory whatever its journal
  // mode.
  static Status open_immutable(const std::string& path, std::unique_ptr<SqliteDb>* db);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  Status exec(const std::string& sql);
  Status prepare(const char* sql, SqliteStatement* statement);
  // One text value of a single-row query such as a PRAGMA.
  Status query_text(const char* sql, std::string* value);

  void set_busy_timeout(int ms) { sqlite3_busy_timeout(db_, ms); }
  // Switches the file to WAL journaling, retrying for up to `busy_timeout_ms` while another
  // connection's lock stands in the way.
  Status switch_to_wal(int busy_timeout_ms);
  int64_t changes() const { return sqlite3_changes64(db_); }
  // The extended result code of this connection's last failure (SQLITE_OK before any); kept
  // across the calls that follow it, such as a transaction's ROLLBACK.
  int last_failure() const { return last_failure_; }
  // Whether the last failure is SQLite's verdict that the bytes are not a sound database
  // (damage), as opposed to an access problem such as a lock or a permission.
  bool damaged() const {
    const int primary = last_failure_ & 0xff;
    return primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT;
  }
  bool in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }
  // True when SQLite opened the file read-only (it does so silently for a write-protected file).
  bool read_only() const { return sqlite3_db_readonly(db_, "main") == 1; }
  const std::string& path() const { return path_; }

 private:
  friend class SqliteStatement;

  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  // Records `rc` as the last failure and describes it, naming the statement `what`.
  Status fail(int rc, const char* what);
  // Opens `name` (a path or a URI) as the database of `path`.
  static Status open_as(const std::string& name, const std::string& path, int flags,
                        std::unique_ptr<SqliteDb>* db);

  sqlite3* db_;
  std::string path_;
  int last_failure_ = SQLITE_OK;
};

// Runs `body` inside BEGIN IMMEDIATE ... COMMIT, so the write lock is taken up front (no
// deadlock between two readers that both want to upgrade); rolls back if `body` or the commit
// fails.
Status with_write_transaction(SqliteDb& db, const std::function<Status()>& body);

// Runs `body` inside BEGIN ... COMMIT: every read in it sees one snapshot of the file.
Status with_read_transaction(SqliteDb& db, const std::function<Status()>& body);

// SQLite has signed 64-bit integers; ids and hashes are stored as their bit patterns.
inline int64_t to_sql(uint64_t value) { return static_cast<int64_t>(value); }
inline uint64_t from_sql(int64_t value) { return static_cast<uint64_t>(value); }

}  // namespace smla
