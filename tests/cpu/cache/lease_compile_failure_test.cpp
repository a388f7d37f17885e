// A failed compile releases its lease: the error goes to the caller, and whoever asks next, in
// this process or one that was waiting in another, compiles the kernel itself.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "cpu/cache/cache_test_support.h"

namespace smla::cache_test {
namespace {

Status failing_compile(std::vector<uint8_t>*, double*) {
  return error(SMLA_ERR_COMPILE, "nvrtc: expected a ';'");
}

TEST(CubinStoreLeases, FailedCompileReleasesTheLease) {
  TempDir dir;
  std::string path = dir.file("cache.sqlite");
  Logger log;
  CubinStore::Options options = options_for(path);
  std::unique_ptr<CubinStore> store = CubinStore::open(options, log);
  std::vector<uint8_t> cubin;
  Status status = store->get_or_compile(test_entry(0), failing_compile, &cubin);
  EXPECT_EQ(status.code(), SMLA_ERR_COMPILE);
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM leases"), 0);
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM kernels"), 0);

  std::atomic<int> calls{0};
  bool compiled = false;
  auto begin = std::chrono::steady_clock::now();
  ASSERT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin, &compiled));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count(), 1.0);
  EXPECT_TRUE(compiled);
  EXPECT_EQ(calls, 1);
}

TEST(CubinStoreLeases, WaiterCompilesWhenTheHolderFails) {
  TempDir dir;
  std::string path = dir.file("cache.sqlite");
  int started[2];
  ASSERT_EQ(pipe(started), 0);
  std::fflush(nullptr);
  pid_t holder = fork();
  ASSERT_GE(holder, 0);
  if (holder == 0) {
    Logger log(SMLA_LOG_ERROR);
    std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
    std::vector<uint8_t> cubin;
    Status status = store->get_or_compile(
        test_entry(0),
        [&](std::vector<uint8_t>*, double*) {
          // Holding the lease now: let the waiter start, then fail.
          if (write(started[1], "x", 1) != 1) _exit(3);
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
          return error(SMLA_ERR_COMPILE, "nvrtc: out of registers");
        },
        &cubin);
    _exit(status.code() == SMLA_ERR_COMPILE ? 0 : 4);
  }
  char signal = 0;
  ASSERT_EQ(read(started[0], &signal, 1), 1);

  Logger log;
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM leases"), 1);  // the holder's
  std::atomic<int> calls{0};
  std::vector<uint8_t> cubin;
  bool compiled = false;
  testing::internal::CaptureStderr();
  ASSERT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin, &compiled));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");  // a released lease, not a stale one
  EXPECT_TRUE(compiled);
  EXPECT_EQ(cubin, test_cubin(0));
  EXPECT_EQ(calls, 1);

  int status = 0;
  ASSERT_EQ(waitpid(holder, &status, 0), holder);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM leases"), 0);
}

}  // namespace
}  // namespace smla::cache_test
