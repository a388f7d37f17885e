// A damaged cache file, as a user meets one: random bytes over pages in the middle, a file cut
// short, a wrong header, a -wal file of another program's database beside it. Every command
// that reads it says so (exit 2, SQLite's finding, and the remedy); `cache verify` reports it
// (exit 1); `cache verify --repair` replaces it with a clean file of what still reads back
// intact, which every command then uses.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "support/cli_process.h"

namespace smla::cli_test {
namespace {

void overwrite(const std::string& path, size_t offset, const std::string& bytes) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(static_cast<std::streamoff>(offset));
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string random_bytes(size_t count) {
  std::mt19937 rng(11);
  std::string bytes(count, '\0');
  for (char& c : bytes) c = static_cast<char>(rng() & 0xff);
  return bytes;
}

// The -wal of another program's database: written by a connection that never checkpoints, and
// copied while it is open (closing it would fold the log into its own file).
std::string foreign_wal(const TempDir& dir) {
  const std::string other = dir.file("other.sqlite");
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(other.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db,
                         "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; "
                         "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('hello');",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  const std::string wal = dir.file("foreign.wal");
  std::filesystem::copy_file(other + "-wal", wal);
  sqlite3_close(db);
  return wal;
}

void expect_readers_refuse(const std::string& db, const std::string& finding) {
  for (const std::vector<std::string>& command : std::vector<std::vector<std::string>>{
           {"ls"}, {"stats"}, {"gc"}, {"export", "--dir", db + ".out"}}) {
    SCOPED_TRACE(command[0]);
    std::vector<std::string> args = {"cache"};
    args.insert(args.end(), command.begin(), command.end());
    args.insert(args.end(), {"--cache", db});
    const CliResult result = run_cli(args);
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_NE(result.err.find(finding), std::string::npos) << result.err;
  }
}

TEST(DamagedCache, EveryReaderSaysSoAndRepairRecovers) {
  TempDir dir;
  const std::string good = dir.file("good.sqlite");
  const nlohmann::json built = build_small_cache(dir, good);
  ASSERT_FALSE(built.is_null());
  const int kernels = built.at("kernels").get<int>();
  const size_t size = std::filesystem::file_size(good);
  const std::string remedy = "smla cache verify --repair --cache ";
  struct Fault {
    const char* name;
    std::function<void(const std::string&)> apply;
  };
  const std::vector<Fault> faults = {
      {"random pages in the middle",
       [&](const std::string& db) {
         overwrite(db, size / 2 / 4096 * 4096, random_bytes(4 * 4096));
       }},
      {"cut short", [&](const std::string& db) { std::filesystem::resize_file(db, size / 2); }},
      {"a wrong header", [&](const std::string& db) { overwrite(db, 0, "not an SQLite db"); }},
  };
  for (const Fault& fault : faults) {
    SCOPED_TRACE(fault.name);
    const std::string db = dir.file(std::string(fault.name) + ".sqlite");
    std::filesystem::copy_file(good, db);
    fault.apply(db);
    expect_readers_refuse(db, remedy + db);
    const CliResult verify = run_cli({"cache", "verify", "--cache", db});
    EXPECT_EQ(verify.exit_code, 1) << verify.out << verify.err;
    EXPECT_NE(verify.out.find(remedy + db), std::string::npos) << verify.out;

    const CliResult repair = run_cli({"cache", "verify", "--repair", "--cache", db});
    EXPECT_EQ(repair.exit_code, 0) << repair.out << repair.err;
    EXPECT_NE(repair.out.find("repaired " + db + ": kept "), std::string::npos) << repair.out;
    const CliResult clean = run_cli({"cache", "verify", "--cache", db});
    EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
    const CliResult ls = run_cli({"cache", "ls", "--json", "--cache", db});
    ASSERT_EQ(ls.exit_code, 0) << ls.err;
    EXPECT_LE(static_cast<int>(ls.json().size()), kernels);
    EXPECT_NE(repair.out.find(fmt::format("kept {} kernels", ls.json().size())), std::string::npos)
        << repair.out;
  }
  {
    SCOPED_TRACE("a damaged file this user may not write is not repaired");
    const std::string db = dir.file("protected.sqlite");
    std::filesystem::copy_file(good, db);
    std::filesystem::resize_file(db, size / 2);
    std::filesystem::permissions(db, std::filesystem::perms::owner_read |
                                         std::filesystem::perms::group_read |
                                         std::filesystem::perms::others_read);
    const std::string before = read_file_bytes(db);
    const CliResult repair =
        run_cli({"cache", "verify", "--repair", "--cache", db}, CliOptions{{}, true});
    EXPECT_EQ(repair.exit_code, 2) << repair.out << repair.err;
    EXPECT_NE(repair.err.find("cannot repair " + db + ": this user may not write it"),
              std::string::npos)
        << repair.err;
    EXPECT_EQ(read_file_bytes(db), before);
  }
  {
    SCOPED_TRACE("another database's -wal beside it");
    const std::string db = dir.file("wal.sqlite");
    std::filesystem::copy_file(good, db);
    std::filesystem::copy_file(foreign_wal(dir), db + "-wal");
    expect_readers_refuse(db, "another database's -wal file");
    const CliResult verify = run_cli({"cache", "verify", "--repair", "--cache", db});
    EXPECT_EQ(verify.exit_code, 2) << verify.out << verify.err;  // not smla's to replace
  }
}

}  // namespace
}  // namespace smla::cli_test
