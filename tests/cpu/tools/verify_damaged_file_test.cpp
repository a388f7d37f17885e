// `cache verify` reads the file itself and writes nothing: a file that does not read as a
// database is damage (exit 1); another program's database, a file it may not read and a
// directory are no usable cache (exit 2), and a writer's lock is waited for, not damage. An empty
// file is an empty cache, and a write-protected file, also a WAL file in a read-only directory,
// is checked like any other.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

#include "support/cli_process.h"

namespace smla::cli_test {
namespace {

void write_bytes(const std::string& path, const std::string& head, size_t random_bytes) {
  std::ofstream file(path, std::ios::binary);
  file << head;
  std::mt19937 rng(7);
  for (size_t i = 0; i < random_bytes; ++i) file.put(static_cast<char>(rng() & 0xff));
}

TEST(CacheVerify, UnreadableFilesAreDamageOrNoCache) {
  TempDir dir;
  {
    SCOPED_TRACE("random bytes");
    const std::string db = dir.file("random.sqlite");
    write_bytes(db, "", 8192);
    const CliResult verify = run_cli({"cache", "verify", "--cache", db});
    EXPECT_EQ(verify.exit_code, 1) << verify.out << verify.err;
    EXPECT_NE(verify.out.find("not a database"), std::string::npos) << verify.out;
  }
  {
    SCOPED_TRACE("SQLite's header, then random bytes");
    const std::string db = dir.file("header.sqlite");
    write_bytes(db, std::string("SQLite format 3\0", 16), 8192);
    const CliResult verify = run_cli({"cache", "verify", "--cache", db});
    EXPECT_EQ(verify.exit_code, 1) << verify.out << verify.err;
    EXPECT_NE(verify.out.find("bad: database:"), std::string::npos) << verify.out;
  }
  {
    SCOPED_TRACE("another program's database");
    const std::string db = dir.file("other.sqlite");
    sql_exec(db, "CREATE TABLE notes (text TEXT)");
    const CliResult verify = run_cli({"cache", "verify", "--cache", db});
    EXPECT_EQ(verify.exit_code, 2) << verify.out << verify.err;
    EXPECT_NE(verify.err.find("another program"), std::string::npos) << verify.err;
  }
  {
    SCOPED_TRACE("an empty, write-protected file");
    const std::string db = dir.file("empty.sqlite");
    std::ofstream(db).close();
    ASSERT_EQ(chmod(db.c_str(), 0444), 0);
    const CliResult verify = run_cli({"cache", "verify", "--cache", db}, {{}, /*as_nobody=*/true});
    EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
    EXPECT_NE(verify.out.find("0 kernels checked, all clean"), std::string::npos) << verify.out;
  }
}

// One real cache (built once: compiling is the slow part), copied for each case.
class CacheVerifyOfACache : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    built_ = new TempDir();
    ASSERT_FALSE(build_small_cache(*built_, built_->file("cache.sqlite")).is_null());
  }
  static void TearDownTestSuite() {
    delete built_;
    built_ = nullptr;
  }
  // A copy of the built cache at `path`, in WAL mode with no -wal or -shm file (as cache build
  // leaves it).
  static void copy_cache_to(const std::string& path) {
    std::filesystem::copy_file(built_->file("cache.sqlite"), path);
  }

  static TempDir* built_;
};

TempDir* CacheVerifyOfACache::built_ = nullptr;

TEST_F(CacheVerifyOfACache, WaitsForAWriterInsteadOfReportingDamage) {
  TempDir dir;
  const std::string db = dir.file("cache.sqlite");
  copy_cache_to(db);
  // In rollback-journal mode a writer's exclusive lock keeps readers out until it commits.
  sql_exec(db, "PRAGMA journal_mode = DELETE");
  sqlite3* writer = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &writer), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(writer, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  std::thread commit_later([writer] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    sqlite3_exec(writer, "COMMIT", nullptr, nullptr, nullptr);
  });
  const CliResult verify = run_cli({"cache", "verify", "--cache", db});
  commit_later.join();
  sqlite3_close(writer);
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("all clean"), std::string::npos) << verify.out;
  EXPECT_GE(verify.seconds, 0.5);
}

TEST_F(CacheVerifyOfACache, WhatCannotBeReadIsNotDamage) {
  TempDir dir;
  {
    SCOPED_TRACE("a directory");
    const std::string path = dir.file("directory.sqlite");
    ASSERT_TRUE(std::filesystem::create_directory(path));
    const CliResult verify = run_cli({"cache", "verify", "--cache", path});
    EXPECT_EQ(verify.exit_code, 2) << verify.out << verify.err;
    EXPECT_EQ(verify.out.find("bad:"), std::string::npos) << verify.out;
  }
  for (const bool as_nobody : {false, true}) {
    SCOPED_TRACE(as_nobody ? "a FIFO, as nobody" : "a FIFO");  // a reader would wait for a writer
    const std::string path = dir.file(as_nobody ? "fifo-nobody.sqlite" : "fifo.sqlite");
    ASSERT_EQ(mkfifo(path.c_str(), 0444), 0);
    CliOptions options;
    options.as_nobody = as_nobody;
    options.timeout_s = 30;
    const CliResult verify = run_cli({"cache", "verify", "--cache", path}, options);
    EXPECT_EQ(verify.exit_code, 2) << verify.out << verify.err;
    EXPECT_NE(verify.err.find("not a regular file"), std::string::npos) << verify.err;
  }
  if (geteuid() == 0) {  // as another user, only root's tests can make the file unreadable
    SCOPED_TRACE("a cache this user may not read");
    const std::string db = dir.file("unreadable.sqlite");
    copy_cache_to(db);
    ASSERT_EQ(chmod(db.c_str(), 0600), 0);
    const CliResult verify = run_cli({"cache", "verify", "--cache", db}, {{}, /*as_nobody=*/true});
    EXPECT_EQ(verify.exit_code, 2) << verify.out << verify.err;
    EXPECT_EQ(verify.out.find("bad:"), std::string::npos) << verify.out;
  }
  {
    SCOPED_TRACE("another program's table named meta");
    const std::string db = dir.file("meta.sqlite");
    sql_exec(db, "CREATE TABLE meta (key TEXT, data TEXT); INSERT INTO meta VALUES ('a', 'b')");
    const CliResult verify = run_cli({"cache", "verify", "--cache", db});
    EXPECT_EQ(verify.exit_code, 2) << verify.out << verify.err;
    EXPECT_NE(verify.err.find("another program"), std::string::npos) << verify.err;
  }
}

TEST_F(CacheVerifyOfACache, ReadsAWalCacheInAReadOnlyDirectory) {
  TempDir dir;
  const std::string shipped = dir.file("shipped");
  ASSERT_TRUE(std::filesystem::create_directory(shipped));
  const std::string db = shipped + "/cache.sqlite";
  copy_cache_to(db);
  ASSERT_EQ(chmod(shipped.c_str(), 0555), 0);
  // Write-protected, and (when the tests run as root) one the verifying user may write, which
  // SQLite still cannot open in WAL mode without creating its -shm beside it.
  const bool root = geteuid() == 0;
  for (const bool writable : root ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
    SCOPED_TRACE(writable ? "a file nobody may write" : "a write-protected file");
    ASSERT_EQ(chmod(db.c_str(), writable ? 0644 : 0444), 0);
    if (writable) {
      ASSERT_EQ(chown(db.c_str(), 65534, 65534), 0);
    }
    const std::string before = read_file_bytes(db);
    const CliResult verify = run_cli({"cache", "verify", "--cache", db}, {{}, /*as_nobody=*/true});
    EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
    EXPECT_NE(verify.out.find("all clean"), std::string::npos) << verify.out;
    EXPECT_EQ(read_file_bytes(db), before);
  }
  ASSERT_EQ(chmod(shipped.c_str(), 0755), 0);  // so that the directory can be removed
}

TEST_F(CacheVerifyOfACache, LeavesNoJournalFilesBehind) {
  TempDir dir;
  {
    SCOPED_TRACE("a file this user may write");
    const std::string db = dir.file("cache.sqlite");
    copy_cache_to(db);
    const CliResult verify = run_cli({"cache", "verify", "--cache", db});
    EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
    EXPECT_FALSE(std::filesystem::exists(db + "-wal"));
    EXPECT_FALSE(std::filesystem::exists(db + "-shm"));
  }
  {
    // SQLite's read-only connection would leave -wal and -shm owned by the verifying user,
    // which the owner's next write then fails on.
    SCOPED_TRACE("a write-protected file in a directory anyone may write");
    const std::string open_dir = dir.file("open");
    ASSERT_TRUE(std::filesystem::create_directory(open_dir));
    ASSERT_EQ(chmod(open_dir.c_str(), 0777), 0);
    const std::string db = open_dir + "/cache.sqlite";
    copy_cache_to(db);
    ASSERT_EQ(chmod(db.c_str(), 0644), 0);
    const CliResult verify = run_cli({"cache", "verify", "--cache", db}, {{}, /*as_nobody=*/true});
    EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
    EXPECT_FALSE(std::filesystem::exists(db + "-wal"));
    EXPECT_FALSE(std::filesystem::exists(db + "-shm"));
  }
}

// A file this user may not write is read as immutable, the only read that creates no file
// beside it, and that read cannot apply a writer's log or journal: while one holds part of the
// file, verify says so (exit 2) instead of judging half a file, also through a symbolic link.
TEST_F(CacheVerifyOfACache, AProtectedFileMidWriteIsNotJudged) {
  TempDir dir;
  {
    SCOPED_TRACE("a WAL writer's log holds a transaction");
    const std::string db = dir.file("wal.sqlite");
    copy_cache_to(db);
    sqlite3* writer = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &writer), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(writer, "PRAGMA wal_autocheckpoint = 0; UPDATE kernels SET hits = 1",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    ASSERT_GT(std::filesystem::file_size(db + "-wal"), 0u);
    const CliResult verify = run_cli({"cache", "verify", "--cache", db}, {{}, /*as_nobody=*/true});
    sqlite3_close(writer);
    EXPECT_EQ(verify.exit_code, 2) << verify.out << verify.err;
    EXPECT_NE(verify.err.find("being written"), std::string::npos) << verify.err;
  }
  const std::string db = dir.file("journal.sqlite");
  copy_cache_to(db);
  sql_exec(db, "PRAGMA journal_mode = DELETE");
  std::filesystem::create_symlink(db, dir.file("link.sqlite"));
  // What a writer in rollback-journal mode leaves while it writes, or when it dies mid-write:
  // only a connection that may write can roll the file back.
  std::ofstream(db + "-journal") << "a journal";
  for (const std::string& path : {db, dir.file("link.sqlite")}) {
    SCOPED_TRACE("a rollback journal beside " + path);
    const CliResult verify =
        run_cli({"cache", "verify", "--cache", path}, {{}, /*as_nobody=*/true});
    EXPECT_EQ(verify.exit_code, 2) << verify.out << verify.err;
    EXPECT_NE(verify.err.find("being written"), std::string::npos) << verify.err;
  }
  {
    SCOPED_TRACE("an empty journal (journal_mode PERSIST or TRUNCATE leaves one): not hot");
    std::ofstream(db + "-journal", std::ios::trunc).close();
    const CliResult verify = run_cli({"cache", "verify", "--cache", db}, {{}, /*as_nobody=*/true});
    EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  }
}

// Overwrites the header of the kernels table's root page.
void damage_kernels_page(const std::string& db) {
  const int64_t page_bytes = test::sql_int(db, "PRAGMA page_size");
  const int64_t kernels_root =
      test::sql_int(db, "SELECT rootpage FROM sqlite_master WHERE name = 'kernels'");
  std::fstream file(db, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(static_cast<std::streamoff>((kernels_root - 1) * page_bytes));
  for (int i = 0; i < 16; ++i) file.put(static_cast<char>(0xa5));
}

// Damaged pages come before the verdicts "not smla's" and "not a schema version": a file whose
// meta row is gone or garbled and whose pages are damaged is damage.
TEST_F(CacheVerifyOfACache, DamageComesBeforeTheForeignVerdict) {
  for (const char* garble_meta :
       {"DELETE FROM meta", "UPDATE meta SET value = 'x1' WHERE name = 'schema_version'"}) {
    SCOPED_TRACE(garble_meta);
    TempDir dir;
    const std::string db = dir.file("cache.sqlite");
    copy_cache_to(db);
    sql_exec(db, std::string("PRAGMA journal_mode = DELETE; ") + garble_meta);
    damage_kernels_page(db);
    const CliResult verify = run_cli({"cache", "verify", "--cache", db});
    EXPECT_EQ(verify.exit_code, 1) << verify.out << verify.err;
    EXPECT_NE(verify.out.find("bad: database:"), std::string::npos) << verify.out;
    EXPECT_EQ(verify.out.find("not a schema version"), std::string::npos) << verify.out;
  }
}

// Without damage, a schema version that is not a number is no cache this build can check.
TEST_F(CacheVerifyOfACache, AGarbledSchemaVersionIsNoCache) {
  TempDir dir;
  const std::string db = dir.file("cache.sqlite");
  copy_cache_to(db);
  sql_exec(db, "UPDATE meta SET value = 'x1' WHERE name = 'schema_version'");
  const CliResult verify = run_cli({"cache", "verify", "--cache", db});
  EXPECT_EQ(verify.exit_code, 2) << verify.out << verify.err;
  EXPECT_NE(verify.err.find("'x1' is not a schema version"), std::string::npos) << verify.err;
}

}  // namespace
}  // namespace smla::cli_test
