// A lease whose holder is gone is taken over at once, without waiting for the lease timeout:
// its pid no longer exists, or has been reused by a process started after the lease.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <ctime>

#include "cache/lease_table.h"
#include "cpu/cache/cache_test_support.h"

namespace smla::cache_test {
namespace {

void check_taken_over(int64_t pid, int64_t started, const std::string& reason) {
  TempDir dir;
  std::string path = dir.file("cache.sqlite");
  Logger log;
  CubinStore::Options options = options_for(path);
  options.lease_timeout_s = 2000000000;  // only the holder's death can free the lease
  std::unique_ptr<CubinStore> store = CubinStore::open(options, log);
  sql_exec(path,
           fmt::format("INSERT INTO leases (id, pid, host, started) VALUES ({}, {}, '{}', {})",
                       static_cast<int64_t>(test_entry(0).id), pid, lease_host_name(), started));

  std::atomic<int> calls{0};
  std::vector<uint8_t> cubin;
  bool compiled = false;
  testing::internal::CaptureStderr();
  auto begin = std::chrono::steady_clock::now();
  ASSERT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin, &compiled));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(compiled);
  EXPECT_EQ(cubin, test_cubin(0));
  EXPECT_EQ(calls, 1);
  EXPECT_LT(seconds, 2.0);
  EXPECT_EQ(count_warnings(warnings), 1) << warnings;
  EXPECT_NE(warnings.find(reason), std::string::npos) << warnings;
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM leases"), 0);
}

TEST(CubinStoreLeases, LeaseOfADeadProcessIsTakenOver) {
  check_taken_over(dead_pid(), std::time(nullptr), "no longer exists");
}

TEST(CubinStoreLeases, LeaseOfAReusedPidIsTakenOver) {
  // This very process's pid, on this host, but the lease predates the process: it was left by
  // an earlier process that had the same pid (a restarted container, typically).
  check_taken_over(getpid(), 1000, "started after the lease");
}

}  // namespace
}  // namespace smla::cache_test
