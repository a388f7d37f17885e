// A new or empty file gets the current schema in WAL mode; opening it again changes nothing.
#include <gtest/gtest.h>

#include <fstream>

#include "cache/schema.h"
#include "cpu/cache/cache_test_support.h"
#include "support/store_reads.h"

namespace smla::cache_test {
namespace {

void check_current_schema(const std::string& path) {
  EXPECT_EQ(sql_int(path, "SELECT value FROM meta WHERE name = 'schema_version'"), kSchemaVersion);
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM pragma_journal_mode WHERE journal_mode = 'wal'"),
            1);
  EXPECT_EQ(sql_int(path,
                    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                    "('meta', 'kernels', 'tuning', 'leases')"),
            4);
}

TEST(CubinStoreMigration, NewAndEmptyFilesGetTheCurrentSchemaOnce) {
  TempDir dir;
  Logger log;
  std::atomic<int> calls{0};
  std::vector<uint8_t> cubin;
  for (bool empty_file : {false, true}) {
    SCOPED_TRACE(empty_file ? "empty file" : "no file");
    std::string path = dir.file(empty_file ? "empty.sqlite" : "new.sqlite");
    if (empty_file) std::ofstream{path};
    {
      std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
      ASSERT_TRUE(store->persistent());
      ASSERT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin));
    }
    check_current_schema(path);
    std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
    ASSERT_TRUE(store->persistent());
    check_current_schema(path);
    EXPECT_EQ(test::listed(*store).size(), 1u);
  }
}

}  // namespace
}  // namespace smla::cache_test
