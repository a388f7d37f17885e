// An SQLite file of another program (tables, but no smla schema) given as the cache is not taken
// over: the store runs memory-only with one warning and the file keeps its bytes and journal
// mode. An empty file still becomes a cache.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cpu/cache/cache_test_support.h"

namespace smla::cache_test {
namespace {

// Another program's database at `path`: one table, one row, after the `pragmas`.
void write_notes_database(const std::string& path, const std::string& pragmas = "") {
  sql_exec(path, pragmas +
                     "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT);"
                     "INSERT INTO notes (text) VALUES ('keep me');");
}

TEST(CubinStoreForeignDatabase, IsLeftUntouchedAndTheStoreIsMemoryOnly) {
  TempDir dir;
  const std::string path = dir.file("notes.db");
  write_notes_database(path);
  const std::string before = read_file_bytes(path);

  Logger log;
  testing::internal::CaptureStderr();
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  std::atomic<int> calls{0};
  std::vector<uint8_t> cubin;
  ASSERT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin));
  const std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_warnings(warnings), 1) << warnings;
  EXPECT_NE(warnings.find("another program"), std::string::npos) << warnings;
  EXPECT_FALSE(store->persistent());

  store.reset();
  EXPECT_EQ(read_file_bytes(path), before);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"), 1);
}

// SQLite lets a file that vacuums switch between full and incremental at any time: the cache's
// own auto_vacuum setting must not reach a file before it is known to be smla's.
TEST(CubinStoreForeignDatabase, OneThatVacuumsKeepsItsMode) {
  TempDir dir;
  const std::string path = dir.file("notes.db");
  write_notes_database(path, "PRAGMA auto_vacuum = FULL;");
  const std::string before = read_file_bytes(path);
  Logger log;
  testing::internal::CaptureStderr();
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  const std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(store->persistent()) << warnings;
  store.reset();
  EXPECT_EQ(read_file_bytes(path), before);
  EXPECT_EQ(sql_int(path, "PRAGMA auto_vacuum"), 1);  // FULL
}

TEST(CubinStoreForeignDatabase, AnEmptyFileBecomesACache) {
  TempDir dir;
  const std::string path = dir.file("empty.sqlite");
  { std::ofstream touch(path); }
  Logger log;
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  EXPECT_TRUE(store->persistent());
  std::atomic<int> calls{0};
  std::vector<uint8_t> cubin;
  ASSERT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin));
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM kernels"), 1);
}

}  // namespace
}  // namespace smla::cache_test
