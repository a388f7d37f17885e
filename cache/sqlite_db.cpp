#include "cache/sqlite_db.h"

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <system_error>
#include <thread>

namespace smla {

namespace {

Status sqlite_error(sqlite3* db, int rc, const char* what) {
  // The connection's message is more specific than the code's (it names the table or file).
  const char* message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  // The start of the statement says which one failed; all of it would swamp a log line.
  constexpr size_t kShownSql = 48;
  std::string statement(what != nullptr ? what : "");
  if (statement.size() > kShownSql) statement = statement.substr(0, kShownSql) + "...";
  return error(SMLA_ERR_CACHE, "sqlite: {} ({}) in: {}", message, rc, statement);
}

}  // namespace

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(other.db_), stmt_(other.stmt_), bind_rc_(other.bind_rc_) {
  other.stmt_ = nullptr;
}

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = other.stmt_;
    bind_rc_ = other.bind_rc_;
    other.stmt_ = nullptr;
  }
  return *this;
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

SqliteStatement& SqliteStatement::bind(int index, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, value);
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

SqliteStatement& SqliteStatement::bind(int index, double value) {
  int rc = sqlite3_bind_double(stmt_, index, value);
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

SqliteStatement& SqliteStatement::bind(int index, const std::string& value) {
  int rc =
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

SqliteStatement& SqliteStatement::bind_blob(int index, const std::vector<uint8_t>& value) {
  // A zero-length blob must still be a blob, not NULL: pass a non-null pointer.
  static const uint8_t kEmpty = 0;
  const void* data = value.empty() ? &kEmpty : value.data();
  int rc = sqlite3_bind_blob64(stmt_, index, data, value.size(), SQLITE_TRANSIENT);
  if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

Status SqliteStatement::fail(int rc) const { return db_->fail(rc, sqlite3_sql(stmt_)); }

Status SqliteStatement::step(bool* has_row) {
  *has_row = false;
  if (bind_rc_ != SQLITE_OK) return fail(bind_rc_);
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) {
    *has_row = true;
    return ok_status();
  }
  if (rc == SQLITE_DONE) return ok_status();
  return fail(rc);
}

Status SqliteStatement::run() {
  bool has_row = false;
  do {
    SMLA_TRY(step(&has_row));
  } while (has_row);
  return ok_status();
}

int64_t SqliteStatement::column_int64(int index) const {
  return sqlite3_column_int64(stmt_, index);
}

double SqliteStatement::column_double(int index) const {
  return sqlite3_column_double(stmt_, index);
}

std::string SqliteStatement::column_text(int index) const {
  const unsigned char* text = sqlite3_column_text(stmt_, index);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text), sqlite3_column_bytes(stmt_, index));
}

std::vector<uint8_t> SqliteStatement::column_blob(int index) const {
  const auto* data = static_cast<const uint8_t*>(sqlite3_column_blob(stmt_, index));
  if (data == nullptr) return {};
  return std::vector<uint8_t>(data, data + sqlite3_column_bytes(stmt_, index));
}

Status SqliteDb::open_immutable(const std::string& path, std::unique_ptr<SqliteDb>* db) {
  // A URI's path is percent-encoded: the characters that would end or escape it are. Leading
  // slashes become one ("file://x" would name the host x).
  std::string uri = "file:";
  const size_t slashes = std::min(path.find_first_not_of('/'), path.size());
  for (const char c : slashes > 1 ? path.substr(slashes - 1) : path) {
    if (c == '%' || c == '?' || c == '#') {
      uri += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    } else {
      uri += c;
    }
  }
  uri += "?immutable=1";
  return open_as(uri, path, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, db);
}

Status SqliteDb::open(const std::string& path, int flags, std::unique_ptr<SqliteDb>* db) {
  // NOTE: a relative path that starts with "file:" would be read as a URI (SQLite as Debian
  // builds it takes URIs by default); an absolute path is always a file's name.
  std::error_code ec;
  const std::string absolute =
      path.empty() || path[0] == '/' ? path : std::filesystem::absolute(path, ec).string();
  return open_as(ec ? path : absolute, path, flags, db);
}

Status SqliteDb::open_as(const std::string& name, const std::string& path, int flags,
                         std::unique_ptr<SqliteDb>* db) {
  // NOTE: SQLite opens whatever the name is: a read-only open of a FIFO waits for a writer
  // forever, and a device such as /dev/null gets a journal created beside it.
  struct stat info {};
  if (stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    return error(SMLA_ERR_CACHE, "{} is not a regular file", path);
  }
  sqlite3* handle = nullptr;
  int rc = sqlite3_open_v2(name.c_str(), &handle, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status status = sqlite_error(handle, rc, "open");
    sqlite3_close_v2(handle);
    return status;
  }
  sqlite3_extended_result_codes(handle, 1);
  db->reset(new SqliteDb(handle, path));
  return ok_status();
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

Status SqliteDb::fail(int rc, const char* what) {
  last_failure_ = rc;
  return sqlite_error(db_, rc, what);
}

Status SqliteDb::exec(const std::string& sql) {
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return fail(rc, sql.c_str());
  return ok_status();
}

Status SqliteDb::prepare(const char* sql, SqliteStatement* statement) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql, -1, &stmt, nullptr);
  if (rc != SQLITE_OK) return fail(rc, sql);
  *statement = SqliteStatement(this, stmt);
  return ok_status();
}

Status SqliteDb::query_text(const char* sql, std::string* value) {
  SqliteStatement statement;
  SMLA_TRY(prepare(sql, &statement));
  bool has_row = false;
  SMLA_TRY(statement.step(&has_row));
  *value = has_row ? statement.column_text(0) : std::string();
  return ok_status();
}

Status SqliteDb::switch_to_wal(int busy_timeout_ms) {
  // NOTE: SQLite does not call the busy handler for a journal-mode switch (it needs every other
  // connection's lock gone), so processes that open a new file together would fail it at once.
  const char* sql = "PRAGMA journal_mode = WAL";
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms);
  for (;;) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql, -1, &stmt, nullptr);
    std::string mode;
    if (rc == SQLITE_OK) rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
      const unsigned char* text = sqlite3_column_text(stmt, 0);  // NULL when out of memory
      if (text != nullptr) mode = reinterpret_cast<const char*>(text);
      rc = SQLITE_OK;
    }
    sqlite3_finalize(stmt);
    if (rc == SQLITE_OK) {
      if (mode == "wal") return ok_status();
      return error(SMLA_ERR_CACHE, "cannot switch to WAL journaling (journal_mode is {})", mode);
    }
    if ((rc & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline) {
      return fail(rc, sql);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

namespace {

// Runs `body` between `begin` and COMMIT; rolls back if `body` or the commit fails.
Status run_transaction(SqliteDb& db, const char* begin, const std::function<Status()>& body) {
  SMLA_TRY(db.exec(begin));
  Status status = body();
  if (status) status = db.exec("COMMIT");
  // A failed COMMIT can leave the transaction open (SQLITE_BUSY); ROLLBACK ends it either way.
  if (!status) db.exec("ROLLBACK");
  return status;
}

}  // namespace

Status with_write_transaction(SqliteDb& db, const std::function<Status()>& body) {
  return run_transaction(db, "BEGIN IMMEDIATE", body);
}

Status with_read_transaction(SqliteDb& db, const std::function<Status()>& body) {
  return run_transaction(db, "BEGIN", body);
}

}  // namespace smla
