#include "support/cache_file.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <functional>

namespace smla::test {

void sql_exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK) << path;
  sqlite3_busy_timeout(db, 10000);
  char* message = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message), SQLITE_OK)
      << sql << ": " << (message ? message : "");
  sqlite3_free(message);
  sqlite3_close(db);
}

namespace {

// Runs a single-value query on `path` and hands its value to `read` (a test failure on error).
void query_one(const std::string& path, const std::string& sql,
               const std::function<void(sqlite3_stmt*)>& read) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 10000);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      read(stmt);
    } else {
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
}

}  // namespace

int64_t sql_int(const std::string& path, const std::string& sql) {
  int64_t value = -1;
  query_one(path, sql, [&](sqlite3_stmt* stmt) { value = sqlite3_column_int64(stmt, 0); });
  return value;
}

std::string sql_text(const std::string& path, const std::string& sql) {
  std::string value;
  query_one(path, sql, [&](sqlite3_stmt* stmt) {
    const unsigned char* text = sqlite3_column_text(stmt, 0);
    if (text != nullptr) value = reinterpret_cast<const char*>(text);
  });
  return value;
}

void flip_cubin_byte(const std::string& path, uint64_t id, int offset) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK) << path;
  sqlite3_blob* blob = nullptr;
  ASSERT_EQ(sqlite3_blob_open(db, "main", "kernels", "cubin", static_cast<int64_t>(id), 1, &blob),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  uint8_t byte = 0;
  EXPECT_EQ(sqlite3_blob_read(blob, &byte, 1, offset), SQLITE_OK);
  byte ^= 0x40;
  EXPECT_EQ(sqlite3_blob_write(blob, &byte, 1, offset), SQLITE_OK);
  sqlite3_blob_close(blob);
  sqlite3_close(db);
}

}  // namespace smla::test
