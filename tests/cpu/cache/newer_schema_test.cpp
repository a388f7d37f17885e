// A file written by a newer smla (schema version above this build's) is not modified in any way:
// the store runs memory-only with one warning; as a system cache it is not consulted.
#include <gtest/gtest.h>

#include <filesystem>

#include "cache/schema.h"
#include "cpu/cache/cache_test_support.h"
#include "support/store_reads.h"

namespace smla::cache_test {
namespace {

std::string make_newer_file(const TempDir& dir) {
  std::string path = dir.file("newer.sqlite");
  sql_exec(path,
           "CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);"
           "INSERT INTO meta VALUES ('schema_version', '" +
               std::to_string(kSchemaVersion + 1) +
               "');"
               "CREATE TABLE kernels (id INTEGER PRIMARY KEY, future_column BLOB);");
  return path;
}

TEST(CubinStoreNewerSchema, FileIsLeftUntouchedAndTheStoreIsMemoryOnly) {
  TempDir dir;
  std::string path = make_newer_file(dir);
  std::string before = read_file_bytes(path);
  auto modified = std::filesystem::last_write_time(path);

  Logger log;
  testing::internal::CaptureStderr();
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  std::atomic<int> calls{0};
  for (int round = 0; round < 2; ++round) {
    std::vector<uint8_t> cubin;
    ASSERT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin));
  }
  ASSERT_TRUE(store->put_tuning(TuningRow()));
  test::collected(*store, 0, "fp-other");
  std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_warnings(warnings), 1) << warnings;
  EXPECT_NE(warnings.find("newer"), std::string::npos) << warnings;
  EXPECT_FALSE(store->persistent());
  EXPECT_EQ(calls, 1);

  store.reset();
  EXPECT_EQ(read_file_bytes(path), before);
  EXPECT_EQ(std::filesystem::last_write_time(path), modified);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(path + "-journal"));
}

TEST(CubinStoreNewerSchema, NewerSystemCacheIsNotConsulted) {
  TempDir dir;
  std::string system_path = make_newer_file(dir);
  Logger log;
  const CubinStore::Options options = options_for(dir.file("user.sqlite"), system_path);
  testing::internal::CaptureStderr();
  std::unique_ptr<CubinStore> store = CubinStore::open(options, log);
  std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_warnings(warnings), 1) << warnings;
  EXPECT_NE(warnings.find("system cache"), std::string::npos) << warnings;
  EXPECT_TRUE(store->persistent());  // the user cache is fine
}

}  // namespace
}  // namespace smla::cache_test
