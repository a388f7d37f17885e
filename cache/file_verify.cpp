#include "cache/file_verify.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "cache/file_size.h"
#include "cache/kernel_table.h"
#include "cache/schema.h"

namespace smla {

namespace {

// SQLite's own check of the b-tree pages; its findings go into `report`.
Status check_pages(SqliteDb& db, const std::string& label_prefix, VerifyReport* report) {
  SqliteStatement quick_check;
  SMLA_TRY(db.prepare("PRAGMA quick_check", &quick_check));
  for (;;) {
    bool has_row = false;
    SMLA_TRY(quick_check.step(&has_row));
    if (!has_row) return ok_status();
    if (quick_check.column_text(0) != "ok") {
      report->bad.push_back(label_prefix + "database: " + quick_check.column_text(0));
    }
  }
}

// What a writer changes in the file itself (a WAL writer's log beside it does not change what
// the file holds until a checkpoint writes it back). Compared before and after an immutable read.
struct FileState {
  ino_t inode = 0;
  off_t size = 0;
  int64_t modified_ns = 0;
  bool operator==(const FileState& o) const {
    return inode == o.inode && size == o.size && modified_ns == o.modified_ns;
  }
};

FileState file_state(const std::string& path) {
  FileState state;
  struct stat info {};
  if (stat(path.c_str(), &info) == 0) {
    state.inode = info.st_ino;
    state.size = info.st_size;
    state.modified_ns = int64_t{info.st_mtim.tv_sec} * 1000000000 + info.st_mtim.tv_nsec;
  }
  return state;
}

// The checks of an open file; a failure to read is damage or an error by SQLite's code.
Status check_open_file(SqliteDb& db, VerifyScope scope, VerifyReport* report) {
  SchemaState state;
  Status status = read_schema_state(db, &state);
  const bool cache = status && state.version == kSchemaVersion;
  const bool empty = status && state.version == 0 && !state.foreign;  // nothing written yet
  if (cache) {
    status = scope == VerifyScope::kPages ? check_pages(db, "", report)
                                          : verify_database(db, "", report);
  }
  // A lost or damaged meta row also looks like another program's file or a version that is
  // none: pages first (unless SQLite already found damage).
  if (!cache && !empty && (status || !db.damaged())) {
    const Status pages = check_pages(db, "", report);
    if (!pages) status = pages;  // a failure of the pages explains more than the version's
  }
  if (!status) {
    if (db.damaged()) {
      report->bad.push_back("database: " + status.message());
      return ok_status();
    }
    if (!report->clean()) return ok_status();  // the damaged pages explain what failed
    return error(SMLA_ERR_CACHE, "cannot read {}: {}", db.path(), status.message());
  }
  if (cache || empty || !report->clean()) return ok_status();
  if (state.foreign) {
    return error(SMLA_ERR_CACHE,
                 "{} is an SQLite database of another program (tables, but not "
                 "smla's)",
                 db.path());
  }
  return error(SMLA_ERR_CACHE, "{} has schema version {}; this build checks version {}", db.path(),
               state.version, kSchemaVersion);
}

// A file this user may not write (or in a directory it may not write), read without creating
// any file beside it: as immutable, SQLite's only way that creates nothing. A writer's journal
// or non-empty write-ahead log may hold part of the file, which only a writer can complete or
// apply (SQLite keeps a log until the last connection closes, so this includes a file that a
// process which wrote it holds open), and a file that changed during the read is not judged
// either (exit 2, with why).
Status verify_protected_file(const std::string& path, VerifyScope scope, VerifyReport* report) {
  const auto in_use = [&](const std::string& file) {
    return error(SMLA_ERR_CACHE,
                 "{} is being written, held open by a process that wrote it, or left by a "
                 "writer that died ({} may hold part of it, which only a writer can apply); "
                 "verify it as a user who may write it, or when no process has it open",
                 path, file);
  };
  for (const char* suffix : {"-journal", "-wal"}) {
    if (file_size_or_zero(path + suffix) > 0) return in_use(path + suffix);
  }
  const FileState before = file_state(path);
  std::unique_ptr<SqliteDb> db;
  SMLA_TRY(SqliteDb::open_immutable(path, &db));
  VerifyReport read;
  Status status = check_open_file(*db, scope, &read);
  if (!(file_state(path) == before) || file_size_or_zero(path + "-journal") > 0 ||
      file_size_or_zero(path + "-wal") > 0) {
    return error(SMLA_ERR_CACHE, "{} changed while it was read; verify it again", path);
  }
  SMLA_TRY(status);
  report->checked += read.checked;
  report->bad.insert(report->bad.end(), read.bad.begin(), read.bad.end());
  return ok_status();
}

}  // namespace

Status damaged_file_error(const std::string& path, const Status& what) {
  return error(SMLA_ERR_CACHE,
               "{} is damaged ({}): repair it with `smla cache verify --repair --cache {}` (as a "
               "user who may write it), or remove it",
               path, what.message(), path);
}

Status reported_failure(const SqliteDb& db, const Status& failure) {
  return db.damaged() ? damaged_file_error(db.path(), failure) : failure;
}

bool may_write_cache_file(const std::string& path) {
  struct stat info {};
  const std::string directory = std::filesystem::path(path).parent_path().string();
  return stat(path.c_str(), &info) == 0 && (info.st_mode & 0222) != 0 &&
         access(path.c_str(), W_OK) == 0 &&
         access(directory.empty() ? "." : directory.c_str(), W_OK) == 0;
}

Status verify_database(SqliteDb& db, const std::string& label_prefix, VerifyReport* report) {
  SMLA_TRY(KernelTable(db).verify(label_prefix, report));
  // The blobs' checksums say nothing about the b-tree pages around them.
  return check_pages(db, label_prefix, report);
}

Status verify_cache_file(const std::string& path, int busy_timeout_ms, VerifyReport* report,
                         VerifyScope scope) {
  // The real file: its directory and the journals beside it are what SQLite uses.
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(path, ec);
  const std::string file = ec ? path : real.string();
  if (!may_write_cache_file(file)) return verify_protected_file(file, scope, report);
  // As any connection (so SQLite's -wal and -shm come and go as usual), but query_only. Like
  // any connection it completes a dead writer's transaction (a checkpoint, a rollback).
  std::unique_ptr<SqliteDb> db;
  SMLA_TRY(SqliteDb::open(file, SQLITE_OPEN_READWRITE, &db));
  db->set_busy_timeout(busy_timeout_ms);
  SMLA_TRY(db->exec("PRAGMA query_only = 1"));
  return check_open_file(*db, scope, report);
}

}  // namespace smla
