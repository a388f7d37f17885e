// A cache path in a directory the process cannot write (or create) degrades to memory-only with
// one warning. As in readonly_file_test.cpp, the store runs as `nobody` so permissions hold.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "cpu/cache/cache_test_support.h"

namespace smla::cache_test {
namespace {

void check_degrades(const std::string& path, const std::string& directory) {
  ChildResult child = run_unprivileged([&]() -> std::string {
    Logger log;
    std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
    if (store->persistent()) return "opened a persistent cache in an unwritable directory";
    std::atomic<int> calls{0};
    for (int round = 0; round < 3; ++round) {
      std::vector<uint8_t> cubin;
      if (!store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin)) {
        return "get_or_compile failed";
      }
    }
    if (calls != 1) return "memory-only mode recompiled";
    return "";
  });
  EXPECT_EQ(child.exit_code, 0) << child.stderr_text;
  EXPECT_EQ(count_warnings(child.stderr_text), 1) << child.stderr_text;
  EXPECT_TRUE(std::filesystem::is_empty(directory)) << path;
}

TEST(CubinStoreUnwritableDirectory, DegradesToMemoryWithOneWarning) {
  TempDir dir;
  std::string locked = dir.file("locked");
  ASSERT_TRUE(std::filesystem::create_directory(locked));
  ASSERT_EQ(chmod(locked.c_str(), 0555), 0);
  {
    SCOPED_TRACE("the file cannot be created");
    check_degrades(locked + "/cache.sqlite", locked);
  }
  {
    SCOPED_TRACE("the cache's directory cannot be created");
    check_degrades(locked + "/smla/cache.sqlite", locked);
  }
}

}  // namespace
}  // namespace smla::cache_test
