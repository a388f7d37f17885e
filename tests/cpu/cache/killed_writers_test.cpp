// Writers SIGKILLed at random moments (mid-migration, mid-compile under a lease, mid-store,
// mid-gc) leave a file that verifies clean, and a later run completes: leases of the dead are
// taken over.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

#include "cpu/cache/cache_test_support.h"

namespace smla::cache_test {
namespace {

constexpr int kKills = 20;
constexpr int kKernels = 40;

size_t cubin_size(int index) { return 1024 + static_cast<size_t>(index) * 1531 % 48000; }

CompileFn slow_compile(int index) {
  return [index](std::vector<uint8_t>* cubin, double* compile_ms) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    *cubin = test_cubin(index, cubin_size(index));
    *compile_ms = 0.5;
    return ok_status();
  };
}

[[noreturn]] void write_until_killed(const std::string& path, int seed) {
  Logger log(SMLA_LOG_ERROR);
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  for (int step = 0;; ++step) {
    int index = (seed * 7 + step) % kKernels;
    std::vector<uint8_t> cubin;
    if (!store->get_or_compile(test_entry(index), slow_compile(index), &cubin) ||
        cubin != test_cubin(index, cubin_size(index))) {
      _exit(1);
    }
    TuningRow row;
    row.problem_id = static_cast<uint64_t>(index);
    row.batch_bucket = 1 << (step % 8);
    row.config_text = "tile=64;";
    store->put_tuning(row);
    // Evictions keep the writers compiling and storing rather than only finding.
    GcReport evicted;
    if (step % 10 == 9) store->gc(256 * 1024, "", &evicted);
  }
}

TEST(CubinStoreCrashSafety, KilledWritersLeaveAConsistentFile) {
  TempDir dir;
  std::string path = dir.file("cache.sqlite");
  std::mt19937 random(20261202);
  std::uniform_int_distribution<int> delay_ms(2, 60);
  for (int kill_index = 0; kill_index < kKills; ++kill_index) {
    std::fflush(nullptr);
    pid_t writer = fork();
    ASSERT_GE(writer, 0);
    if (writer == 0) write_until_killed(path, kill_index);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(random)));
    ASSERT_EQ(kill(writer, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(writer, &status, 0), writer);
    ASSERT_TRUE(WIFSIGNALED(status)) << "writer " << kill_index << " exited early: " << status;

    Logger log(SMLA_LOG_ERROR);
    std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
    ASSERT_TRUE(store->persistent()) << "after kill " << kill_index;
    VerifyReport report = store->verify();
    ASSERT_TRUE(report.clean()) << "after kill " << kill_index << ": " << report.bad[0];
  }

  Logger log(SMLA_LOG_ERROR);
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  for (int index = 0; index < kKernels; ++index) {
    std::vector<uint8_t> cubin;
    ASSERT_TRUE(store->get_or_compile(test_entry(index), slow_compile(index), &cubin));
    EXPECT_EQ(cubin, test_cubin(index, cubin_size(index)));
  }
  EXPECT_TRUE(store->verify().clean());
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM leases"), 0);
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM kernels"), kKernels);
}

}  // namespace
}  // namespace smla::cache_test
