// default_cache_path follows the XDG base directory spec, then $HOME, then memory only.
#include <gtest/gtest.h>

#include "cpu/cache/cache_test_support.h"
#include "support/scoped_env.h"

namespace smla::cache_test {
namespace {

TEST(CubinStoreDefaultPath, XdgThenHomeThenMemory) {
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/var/cache/me");
    ScopedEnv home("HOME", "/home/me");
    EXPECT_EQ(default_cache_path(), "/var/cache/me/smla/cache.sqlite");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv home("HOME", "/home/me");
    EXPECT_EQ(default_cache_path(), "/home/me/.cache/smla/cache.sqlite");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "relative/cache");  // invalid per the spec: ignored
    ScopedEnv home("HOME", "/home/me");
    EXPECT_EQ(default_cache_path(), "/home/me/.cache/smla/cache.sqlite");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "");
    ScopedEnv home("HOME", nullptr);
    EXPECT_EQ(default_cache_path(), "");
  }
}

TEST(CubinStoreDefaultPath, OpenCreatesTheDirectory) {
  TempDir dir;
  ScopedEnv xdg("XDG_CACHE_HOME", dir.file("nested/cache").c_str());
  Logger log;
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(default_cache_path()), log);
  EXPECT_TRUE(store->persistent());
  EXPECT_EQ(store->path(), dir.file("nested/cache/smla/cache.sqlite"));
  std::atomic<int> calls{0};
  std::vector<uint8_t> cubin;
  EXPECT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin));
  EXPECT_EQ(sql_int(store->path(), "SELECT count(*) FROM kernels"), 1);
}

}  // namespace
}  // namespace smla::cache_test
