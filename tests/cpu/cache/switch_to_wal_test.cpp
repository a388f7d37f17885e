// SQLite answers a switch to WAL journaling with SQLITE_BUSY at once while another connection
// reads the file (its busy handler is not called): SqliteDb::switch_to_wal retries until its
// busy timeout, so a process that opens the cache while another reads it still gets WAL.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <memory>
#include <thread>

#include "cache/sqlite_db.h"
#include "cpu/cache/cache_test_support.h"

namespace smla::cache_test {
namespace {

// A connection that holds a read transaction on `path` (a shared lock in rollback-journal mode).
class Reader {
 public:
  explicit Reader(const std::string& path) {
    EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db_, "BEGIN; SELECT count(*) FROM notes;", nullptr, nullptr, nullptr),
              SQLITE_OK);
  }
  ~Reader() { sqlite3_close(db_); }
  void finish() { sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr); }

 private:
  sqlite3* db_ = nullptr;
};

std::string journal_mode(const std::string& path) {
  std::unique_ptr<SqliteDb> db;
  EXPECT_TRUE(SqliteDb::open(path, SQLITE_OPEN_READONLY, &db));
  std::string mode;
  EXPECT_TRUE(db->query_text("PRAGMA journal_mode", &mode));
  return mode;
}

TEST(SqliteSwitchToWal, WaitsForAReaderUntilTheBusyTimeout) {
  TempDir dir;
  const std::string path = dir.file("notes.db");
  sql_exec(path, "CREATE TABLE notes (text TEXT)");
  std::unique_ptr<SqliteDb> db;
  ASSERT_TRUE(SqliteDb::open(path, SQLITE_OPEN_READWRITE, &db));
  Reader reader(path);
  {
    SCOPED_TRACE("the reader stays longer than the timeout");
    const Status status = db->switch_to_wal(/*busy_timeout_ms=*/100);
    EXPECT_FALSE(status);
    EXPECT_EQ(db->last_failure() & 0xff, SQLITE_BUSY) << status.message();
    EXPECT_EQ(journal_mode(path), "delete");
  }
  {
    SCOPED_TRACE("the reader finishes within the timeout");
    std::thread finish_later([&reader] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      reader.finish();
    });
    const Status status = db->switch_to_wal(/*busy_timeout_ms=*/10000);
    finish_later.join();
    EXPECT_TRUE(status) << status.message();
    EXPECT_EQ(journal_mode(path), "wal");
  }
}

}  // namespace
}  // namespace smla::cache_test
