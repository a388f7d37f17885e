// A cache file the process may not write is used read-only, with one warning: every kernel in
// it is found without compiling, a new kernel is compiled once into memory, and the file is left
// exactly as it was. Both ways a user meets it: a 0444 file, and a writable file in a directory
// the user may not write (where SQLite could create no -wal or -shm).
//
// The tests run as root, which ignores permission bits, so the store is opened in a child that
// has become `nobody` (see run_unprivileged): the kernel then refuses writes exactly as it would
// for any user.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "cpu/cache/cache_test_support.h"

namespace smla::cache_test {
namespace {

// Writes kernel 0 into a cache at `path` (as root).
void write_kernel_zero(const std::string& path) {
  Logger log;
  std::atomic<int> calls{0};
  std::vector<uint8_t> cubin;
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  ASSERT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin));
}

void check_used_read_only(const std::string& path) {
  const std::string before = read_file_bytes(path);
  ChildResult child = run_unprivileged([&]() -> std::string {
    Logger log;
    Status file_status;
    std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log, &file_status);
    if (!file_status) return "the file was not used: " + file_status.message();
    if (store->persistent()) return "the read-only file was opened as a persistent cache";
    std::atomic<int> calls{0};
    for (int round = 0; round < 3; ++round) {
      for (int index : {0, 1}) {
        std::vector<uint8_t> cubin;
        if (!store->get_or_compile(test_entry(index), counting_compile(index, &calls), &cubin)) {
          return "get_or_compile failed";
        }
        if (cubin != test_cubin(index)) return "wrong cubin";
      }
      if (!store->put_tuning(TuningRow())) return "put_tuning failed";
    }
    if (calls != 1) return "compiled " + std::to_string(calls) + " times (expected kernel 1 once)";
    std::vector<KernelEntry> entries;
    if (!store->list(&entries) || entries.size() != 2) return "the listing is not file + memory";
    return "";
  });
  EXPECT_EQ(child.exit_code, 0) << child.stderr_text;
  EXPECT_EQ(count_warnings(child.stderr_text), 1) << child.stderr_text;
  EXPECT_NE(child.stderr_text.find("using it read-only"), std::string::npos) << child.stderr_text;
  EXPECT_EQ(read_file_bytes(path), before);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST(CubinStoreReadOnlyFile, IsUsedReadOnly) {
  {
    SCOPED_TRACE("a write-protected file");
    TempDir dir;
    const std::string path = dir.file("cache.sqlite");
    write_kernel_zero(path);
    ASSERT_EQ(chmod(path.c_str(), 0444), 0);
    check_used_read_only(path);
  }
  {
    SCOPED_TRACE("a writable file in a directory this user may not write");
    TempDir dir;
    const std::string locked = dir.file("locked");
    ASSERT_TRUE(std::filesystem::create_directory(locked));
    const std::string path = locked + "/cache.sqlite";
    write_kernel_zero(path);
    ASSERT_EQ(chmod(path.c_str(), 0666), 0);
    ASSERT_EQ(chmod(locked.c_str(), 0555), 0);
    check_used_read_only(path);
  }
}

}  // namespace
}  // namespace smla::cache_test
