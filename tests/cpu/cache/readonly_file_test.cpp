// A cache file the process may not write degrades to memory-only with one warning, and is left
// as it was.
//
// The tests run as root, which ignores permission bits, so the store is opened in a child that
// has become `nobody` (see run_unprivileged): the kernel then refuses writes to the 0444 file
// exactly as it would for any user, and SQLite opens it read-only.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "cpu/cache/cache_test_support.h"

namespace smla::cache_test {
namespace {

TEST(CubinStoreReadOnlyFile, DegradesToMemoryWithOneWarning) {
  TempDir dir;
  std::string path = dir.file("cache.sqlite");
  {
    Logger log;
    std::atomic<int> calls{0};
    std::vector<uint8_t> cubin;
    std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
    ASSERT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin));
  }
  ASSERT_EQ(chmod(path.c_str(), 0444), 0);
  std::string before = read_file_bytes(path);

  ChildResult child = run_unprivileged([&]() -> std::string {
    Logger log;
    std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
    if (store->persistent()) return "the read-only file was opened as a persistent cache";
    std::atomic<int> calls{0};
    for (int round = 0; round < 3; ++round) {
      std::vector<uint8_t> cubin;
      if (!store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin)) {
        return "get_or_compile failed";
      }
      if (cubin != test_cubin(0)) return "wrong cubin";
      if (!store->put_tuning(TuningRow())) return "put_tuning failed";
    }
    if (calls != 1) return "memory-only mode recompiled";
    return "";
  });
  EXPECT_EQ(child.exit_code, 0) << child.stderr_text;
  EXPECT_EQ(count_warnings(child.stderr_text), 1) << child.stderr_text;
  EXPECT_NE(child.stderr_text.find("read-only"), std::string::npos) << child.stderr_text;
  EXPECT_EQ(read_file_bytes(path), before);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

}  // namespace
}  // namespace smla::cache_test
