#include "support/cache_file.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

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

int64_t sql_int(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  int64_t value = -1;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 10000);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      value = sqlite3_column_int64(stmt, 0);
    } else {
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
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
