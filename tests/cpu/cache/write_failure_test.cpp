// A file that fails after it was opened (a write the file system refuses, a lock held past
// busy_timeout) makes the store memory-only with one warning; the call that hit the failure
// still succeeds, and nothing is compiled twice from then on.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>

#include <chrono>

#include "cpu/cache/cache_test_support.h"

namespace smla::cache_test {
namespace {

constexpr size_t kBigCubin = 4 * 1024 * 1024;

TEST(CubinStoreWriteFailure, RefusedWriteDegradesToMemory) {
  TempDir dir;
  std::string path = dir.file("cache.sqlite");
  // RLIMIT_FSIZE makes the kernel refuse writes past 1 MiB (EFBIG), as a full disk would.
  ChildResult child = run_unprivileged([&]() -> std::string {
    Logger log;
    std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
    std::atomic<int> calls{0};
    std::vector<uint8_t> cubin;
    if (!store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin)) {
      return "small kernel failed";
    }
    signal(SIGXFSZ, SIG_IGN);
    rlimit limit = {1 << 20, 1 << 20};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return "setrlimit failed";
    for (int round = 0; round < 3; ++round) {
      bool compiled = false;
      if (!store->get_or_compile(test_entry(1), counting_compile(1, &calls, kBigCubin), &cubin,
                                 &compiled)) {
        return "big kernel failed";
      }
      if (cubin != test_cubin(1, kBigCubin)) return "wrong big cubin";
      if (compiled != (round == 0)) return "recompiled after degrading";
    }
    if (store->persistent()) return "still persistent after a refused write";
    if (!store->put_tuning(TuningRow())) return "put_tuning failed";
    if (calls != 2) return "wrong compile count";
    return "";
  });
  EXPECT_EQ(child.exit_code, 0) << child.stderr_text;
  EXPECT_EQ(count_warnings(child.stderr_text), 1) << child.stderr_text;

  // The file kept what was committed before, and nothing half-written.
  Logger log;
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  EXPECT_TRUE(store->verify().clean());
  EXPECT_TRUE(store->find(test_entry(0).id).has_value());
  EXPECT_FALSE(store->find(test_entry(1).id).has_value());
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM leases"), 0);  // given up when degrading
}

TEST(CubinStoreWriteFailure, LockHeldPastBusyTimeoutDegradesToMemory) {
  TempDir dir;
  std::string path = dir.file("cache.sqlite");
  Logger log;
  CubinStore::Options options = options_for(path);
  options.busy_timeout_ms = 200;
  std::unique_ptr<CubinStore> store = CubinStore::open(options, log);
  sqlite3* writer = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &writer), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(writer, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);

  std::atomic<int> calls{0};
  testing::internal::CaptureStderr();
  auto begin = std::chrono::steady_clock::now();
  for (int round = 0; round < 3; ++round) {
    std::vector<uint8_t> cubin;
    ASSERT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin));
    EXPECT_EQ(cubin, test_cubin(0));
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_warnings(warnings), 1) << warnings;
  EXPECT_NE(warnings.find("locked"), std::string::npos) << warnings;
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(store->persistent());
  EXPECT_LT(seconds, 3.0);
  sqlite3_exec(writer, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(writer);
}

}  // namespace
}  // namespace smla::cache_test
