// A path that is not an smla cache (not a database, a directory, a FIFO, a database of another
// program) degrades to memory-only with one warning and is left exactly as it was.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "cpu/cache/cache_test_support.h"

namespace smla::cache_test {
namespace {

void check_degrades_and_leaves(const std::string& path) {
  std::string before = std::filesystem::is_regular_file(path) ? read_file_bytes(path) : "";
  Logger log;
  testing::internal::CaptureStderr();
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  std::atomic<int> calls{0};
  for (int round = 0; round < 2; ++round) {
    std::vector<uint8_t> cubin;
    ASSERT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin));
    EXPECT_EQ(cubin, test_cubin(0));
  }
  std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_warnings(warnings), 1) << warnings;
  EXPECT_NE(warnings.find(path), std::string::npos) << warnings;
  EXPECT_FALSE(store->persistent());
  EXPECT_EQ(calls, 1);
  if (std::filesystem::is_regular_file(path)) {
    EXPECT_EQ(read_file_bytes(path), before);
  }
}

TEST(CubinStoreUnusableFile, DegradesToMemoryWithOneWarning) {
  TempDir dir;
  {
    SCOPED_TRACE("not a database");
    std::string path = dir.file("garbage.sqlite");
    std::ofstream(path) << std::string(8192, 'x');
    check_degrades_and_leaves(path);
  }
  {
    SCOPED_TRACE("a directory");
    std::string path = dir.file("directory.sqlite");
    std::filesystem::create_directory(path);
    check_degrades_and_leaves(path);
  }
  {
    SCOPED_TRACE("a FIFO");
    std::string path = dir.file("fifo.sqlite");
    ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
    check_degrades_and_leaves(path);
  }
  {
    SCOPED_TRACE("another program's database: the migration fails and is rolled back");
    std::string path = dir.file("foreign.sqlite");
    sql_exec(path, "CREATE TABLE kernels (name TEXT); INSERT INTO kernels VALUES ('mine')");
    check_degrades_and_leaves(path);
    EXPECT_EQ(sql_int(path, "SELECT count(*) FROM sqlite_master"), 1);
  }
}

}  // namespace
}  // namespace smla::cache_test
