// A lease that outlives the lease timeout is taken over even when its holder cannot be checked
// (another host, another boot, no lock) or seems alive: a hung compiler must not block everyone
// forever. Until then, others wait.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>

#include "cache/lease_table.h"
#include "cpu/cache/cache_test_support.h"

namespace smla::cache_test {
namespace {

struct TakeOver {
  double seconds;       // how long get_or_compile took
  int64_t finished_at;  // unix seconds when it returned
};

// Puts a lease of `pid` on `host` on kernel 0, taken at `started`, and times how long
// get_or_compile takes to get the kernel anyway.
TakeOver take_over(int lease_timeout_s, int64_t started, int64_t pid = 1,
                   const std::string& host = "elsewhere.example") {
  TempDir dir;
  std::string path = dir.file("cache.sqlite");
  Logger log(SMLA_LOG_ERROR);
  CubinStore::Options options = options_for(path);
  options.lease_timeout_s = lease_timeout_s;
  std::unique_ptr<CubinStore> store = CubinStore::open(options, log);
  sql_exec(path,
           fmt::format("INSERT INTO leases (id, pid, host, started) VALUES ({}, {}, '{}', {})",
                       static_cast<int64_t>(test_entry(0).id), pid, host, started));
  std::atomic<int> calls{0};
  std::vector<uint8_t> cubin;
  bool compiled = false;
  auto begin = std::chrono::steady_clock::now();
  EXPECT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin, &compiled));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_TRUE(compiled);
  EXPECT_EQ(cubin, test_cubin(0));
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM leases"), 0);
  return {seconds, static_cast<int64_t>(std::time(nullptr))};
}

// A lease taken now, with a timeout of 1 s: it is waited on until it is older than the timeout
// in whole seconds (checked against the clock, not a stopwatch, which the moment within the
// second and the setup's disk syncs would make flaky), and not much longer.
void expect_waited_until_timeout(int64_t pid, const std::string& host) {
  const int64_t started = std::time(nullptr);
  const TakeOver result = take_over(1, started, pid, host);
  EXPECT_GT(result.finished_at - started, 1);
  EXPECT_LT(result.seconds, 5.0);
}

TEST(CubinStoreLeases, LeaseOlderThanTheTimeoutIsTakenOver) {
  EXPECT_LT(take_over(600, std::time(nullptr) - 1000).seconds, 1.0);
}

TEST(CubinStoreLeases, FreshLeaseIsWaitedOnUntilItTimesOut) {
  expect_waited_until_timeout(1, "elsewhere.example");
}

TEST(CubinStoreLeases, LeaseOfAnotherBootIsWaitedOnUntilItTimesOut) {
  // Locked on a kernel that is not running here (another machine's, or before a reboot): the
  // lock says nothing here.
  expect_waited_until_timeout(1, lease_host_name() + " boot:00000000-0000-0000-0000-000000000000");
}

TEST(CubinStoreLeases, LeaseWithoutALockIsWaitedOnUntilItTimesOut) {
  // A holder that could not open the side file: even a pid that exists nowhere does not free
  // its lease early.
  expect_waited_until_timeout(dead_pid(), lease_host_name());
}

}  // namespace
}  // namespace smla::cache_test
