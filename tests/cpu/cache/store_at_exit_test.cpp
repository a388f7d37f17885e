// A store kept in a static (as a server keeps its context) is destroyed at exit, after the
// statics constructed later, among them whatever the store first created: the registry of lease
// locks (lease_locks.cpp) must still be usable then.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

#include "cpu/cache/cache_test_support.h"

namespace smla::cache_test {
namespace {

TEST(CubinStoreAtExit, AStoreKeptInAStaticClosesCleanly) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process, where no store was opened
  TempDir dir;
  const std::string path = dir.file("cache.sqlite");
  EXPECT_EXIT(
      {
        // Constructed before the first store, so destroyed after the statics the store creates.
        static Logger log;
        static std::unique_ptr<CubinStore> kept;
        kept = CubinStore::open(options_for(path), log);
        std::atomic<int> calls{0};
        std::vector<uint8_t> cubin;
        const bool ok = kept->persistent() &&
                        kept->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin);
        std::exit(ok && calls == 1 ? 0 : 3);
      },
      testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace smla::cache_test
