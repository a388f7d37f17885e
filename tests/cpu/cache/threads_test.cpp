// Threads of one process asking for the same kernels at once compile each of them once, with a
// file or in memory.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "cpu/cache/cache_test_support.h"

namespace smla::cache_test {
namespace {

constexpr int kThreads = 8;
constexpr int kKernels = 4;

void check_compiles_once(CubinStore& store) {
  std::atomic<int> calls{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int thread = 0; thread < kThreads; ++thread) {
    threads.emplace_back([&, thread] {
      for (int step = 0; step < kKernels; ++step) {
        int index = (thread + step) % kKernels;
        CompileFn compile = [&, index](std::vector<uint8_t>* cubin, double* compile_ms) {
          ++calls;
          std::this_thread::sleep_for(std::chrono::milliseconds(30));
          *cubin = test_cubin(index);
          *compile_ms = 30;
          return ok_status();
        };
        std::vector<uint8_t> cubin;
        if (!store.get_or_compile(test_entry(index), compile, &cubin) ||
            cubin != test_cubin(index)) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(calls, kKernels);
}

TEST(CubinStoreThreads, ConcurrentRequestsCompileEachKernelOnce) {
  Logger log;
  {
    SCOPED_TRACE("file");
    TempDir dir;
    std::unique_ptr<CubinStore> store =
        CubinStore::open(options_for(dir.file("cache.sqlite")), log);
    check_compiles_once(*store);
    EXPECT_EQ(sql_int(dir.file("cache.sqlite"), "SELECT count(*) FROM leases"), 0);
  }
  {
    SCOPED_TRACE("memory");
    std::unique_ptr<CubinStore> store = CubinStore::open(options_for(""), log);
    check_compiles_once(*store);
  }
}

}  // namespace
}  // namespace smla::cache_test
