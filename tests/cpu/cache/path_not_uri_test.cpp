// A cache path is a file's name even where SQLite would read it as a URI (a relative path that
// starts with "file:"): the store creates exactly that file, not the one the URI names.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "cpu/cache/cache_test_support.h"

namespace smla::cache_test {
namespace {

TEST(CubinStorePath, ARelativeFileColonPathIsAFileName) {
  TempDir dir;
  const std::string name = "file:rel.sqlite?mode=memory";
  std::fflush(nullptr);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // the working directory changes in the child only
    if (chdir(dir.path().c_str()) != 0) _exit(3);
    Logger log(SMLA_LOG_ERROR);
    std::unique_ptr<CubinStore> store = CubinStore::open(options_for(name), log);
    std::atomic<int> calls{0};
    std::vector<uint8_t> cubin;
    if (!store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin)) _exit(4);
    _exit(store->persistent() ? 0 : 5);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(std::filesystem::exists(dir.file(name)));
  EXPECT_FALSE(std::filesystem::exists(dir.file("rel.sqlite")));
  EXPECT_EQ(sql_int(dir.file(name), "SELECT count(*) FROM kernels"), 1);
}

}  // namespace
}  // namespace smla::cache_test
