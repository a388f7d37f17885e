// `cache verify` reads the file itself, read-only: a file that does not read as a database is
// damage (exit 1), another program's database is no cache (exit 2), an empty file is an empty
// cache, and a write-protected file is checked like any other.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <random>

#include "cpu/tools/cli_test_support.h"

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

}  // namespace
}  // namespace smla::cli_test
