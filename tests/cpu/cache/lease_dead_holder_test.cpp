// A lease whose holder is gone is taken over without waiting for the lease timeout, whatever the
// holder's pid namespace: a holder on this kernel holds its lease's lock (lease_locks.h), which
// the kernel drops when it dies. A live holder in another namespace (another container of the
// pod, with pids that mean nothing here) is waited on until it ends.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "cache/lease_locks.h"
#include "cache/lease_table.h"
#include "cpu/cache/cache_test_support.h"

namespace smla::cache_test {
namespace {

// This machine's host name in another pid namespace, holding the lease's lock on this kernel.
std::string other_namespace_locked_host() {
  std::string host = lease_host_name();
  host = host.substr(0, host.find(" pid:[")) + " pid:[1]";
  return host + " boot:" + kernel_boot_id();
}

struct Compiled {
  double seconds;        // how long get_or_compile took
  std::string warnings;  // what the store logged
};

// A store that waits for no lease timeout, only for holders' ends.
std::unique_ptr<CubinStore> store_without_timeout(const std::string& path, const Logger& log) {
  CubinStore::Options options = options_for(path);
  options.lease_timeout_s = 2000000000;
  std::unique_ptr<CubinStore> store = CubinStore::open(options, log);
  EXPECT_TRUE(store->persistent());
  return store;
}

// A lease of `pid` on `host` on kernel 0, taken now.
void put_lease(const std::string& path, int64_t pid, const std::string& host) {
  sql_exec(path,
           fmt::format("INSERT INTO leases (id, pid, host, started) VALUES ({}, {}, '{}', {})",
                       static_cast<int64_t>(test_entry(0).id), pid, host, std::time(nullptr)));
}

// Gets kernel 0 from `store`, which compiles it once, and says how long it took and what was
// logged.
Compiled timed_get(CubinStore& store) {
  std::atomic<int> calls{0};
  std::vector<uint8_t> cubin;
  testing::internal::CaptureStderr();
  const auto begin = std::chrono::steady_clock::now();
  EXPECT_TRUE(store.get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_EQ(cubin, test_cubin(0));
  EXPECT_EQ(calls, 1);
  return {seconds, testing::internal::GetCapturedStderr()};
}

// What the store logs when it takes over the lease of a holder that died.
void expect_taken_over_from_the_dead(const Compiled& result) {
  EXPECT_NE(result.warnings.find("no longer holds the lease's lock"), std::string::npos)
      << result.warnings;
}

// Compiles kernel 0, noting first the lease row's host and, with `held`, whether another open
// of the side file sees the lease's lock.
CompileFn compile_noting_lease(const std::string& path, std::string* host,
                               std::optional<bool>* held = nullptr) {
  return [path, host, held](std::vector<uint8_t>* cubin, double* compile_ms) {
    *host = test::sql_text(path, "SELECT host FROM leases");
    if (held != nullptr) *held = LeaseLocks(path).held_elsewhere(test_entry(0).id);
    *cubin = test_cubin(0);
    *compile_ms = 1;
    return ok_status();
  };
}

void expect_taken_over_at_once(int64_t pid, const std::string& host) {
  TempDir dir;
  const std::string path = dir.file("cache.sqlite");
  Logger log;
  std::unique_ptr<CubinStore> store = store_without_timeout(path, log);
  put_lease(path, pid, host);
  const Compiled result = timed_get(*store);
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM leases"), 0);
  EXPECT_LT(result.seconds, 2.0);
  EXPECT_EQ(count_warnings(result.warnings), 1) << result.warnings;
  expect_taken_over_from_the_dead(result);
}

TEST(CubinStoreLeases, LeaseOfADeadHolderIsTakenOverAtOnce) {
  ASSERT_FALSE(kernel_boot_id().empty());
  {
    SCOPED_TRACE("this pid namespace");
    expect_taken_over_at_once(dead_pid(), locked_lease_host_name());
  }
  {
    SCOPED_TRACE("another pid namespace: a restarted container's predecessor");
    expect_taken_over_at_once(1, other_namespace_locked_host());
  }
  {
    SCOPED_TRACE("this very pid, left by an earlier process that had it");
    expect_taken_over_at_once(getpid(), locked_lease_host_name());
  }
}

// A process that locks kernel 0's lease through `side_file_of` (a cache path) for 1.5 s, then
// exits; returns once the lock is held.
pid_t hold_lock_for_a_while(const std::string& side_file_of) {
  int ready[2];
  EXPECT_EQ(pipe(ready), 0);
  std::fflush(nullptr);
  const pid_t holder = fork();
  if (holder == 0) {
    LeaseLocks locks(side_file_of);
    const char locked = locks.take(test_entry(0).id) ? 'y' : 'n';
    (void)!write(ready[1], &locked, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    _exit(0);
  }
  char locked = 0;
  EXPECT_EQ(read(ready[0], &locked, 1), 1);
  close(ready[0]);
  close(ready[1]);
  EXPECT_EQ(locked, 'y');
  return holder;
}

TEST(CubinStoreLeases, LeaseOfALiveHolderInAnotherNamespaceIsWaitedOnUntilItEnds) {
  TempDir dir;
  const std::string real_dir = dir.file("real");
  ASSERT_TRUE(std::filesystem::create_directory(real_dir));
  std::filesystem::create_symlink(real_dir + "/cache.sqlite", dir.file("link.sqlite"));
  for (const std::string& store_path : {real_dir + "/cache.sqlite", dir.file("link.sqlite")}) {
    SCOPED_TRACE(store_path);
    std::filesystem::remove(real_dir + "/cache.sqlite");
    Logger log;
    std::unique_ptr<CubinStore> store = store_without_timeout(store_path, log);
    put_lease(store_path, 1, other_namespace_locked_host());
    // The holder reaches the cache by its real path; the store, the second time, by a symbolic
    // link: both must meet in one side file.
    const pid_t holder = hold_lock_for_a_while(real_dir + "/cache.sqlite");
    const Compiled result = timed_get(*store);
    waitpid(holder, nullptr, 0);
    EXPECT_GT(result.seconds, 1.0);
    EXPECT_LT(result.seconds, 10.0);
    expect_taken_over_from_the_dead(result);
  }
}

// Another store of this process (its own open of the side file) is a live holder too.
TEST(CubinStoreLeases, AnotherStoreOfThisProcessIsWaitedOn) {
  TempDir dir;
  const std::string path = dir.file("cache.sqlite");
  Logger log;
  std::unique_ptr<CubinStore> first = store_without_timeout(path, log);
  std::unique_ptr<CubinStore> second = store_without_timeout(path, log);
  std::atomic<bool> compiling{false};
  std::thread holder([&] {
    std::vector<uint8_t> cubin;
    CompileFn slow = [&](std::vector<uint8_t>* out, double* compile_ms) {
      compiling = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1000));
      *out = test_cubin(0);
      *compile_ms = 1000;
      return ok_status();
    };
    EXPECT_TRUE(first->get_or_compile(test_entry(0), slow, &cubin));
  });
  while (!compiling) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::atomic<int> calls{0};
  std::vector<uint8_t> cubin;
  bool compiled = true;
  testing::internal::CaptureStderr();
  EXPECT_TRUE(
      second->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin, &compiled));
  const std::string warnings = testing::internal::GetCapturedStderr();
  holder.join();
  EXPECT_FALSE(compiled);  // it waited for the first store's cubin
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(count_warnings(warnings), 0) << warnings;
}

// A child forked while its parent compiles (a worker pool, say) does not keep the parent's lock
// alive: when the parent dies, its lease is taken over at once, not when the child ends.
TEST(CubinStoreLeases, AForkedChildDoesNotKeepADeadParentsLease) {
  TempDir dir;
  const std::string path = dir.file("cache.sqlite");
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  std::fflush(nullptr);
  const pid_t parent = fork();
  if (parent == 0) {
    Logger quiet(SMLA_LOG_ERROR);
    std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), quiet);
    CompileFn compile = [&](std::vector<uint8_t>*, double*) {
      if (fork() == 0) {  // the child outlives its parent by seconds
        std::this_thread::sleep_for(std::chrono::seconds(4));
        _exit(0);
      }
      (void)!write(ready[1], "y", 1);
      std::this_thread::sleep_for(std::chrono::seconds(60));  // killed before
      return ok_status();
    };
    std::vector<uint8_t> cubin;
    (void)store->get_or_compile(test_entry(0), compile, &cubin);
    _exit(1);
  }
  char compiling = 0;
  ASSERT_EQ(read(ready[0], &compiling, 1), 1);
  close(ready[0]);
  close(ready[1]);
  kill(parent, SIGKILL);
  waitpid(parent, nullptr, 0);
  Logger log;
  const Compiled result = timed_get(*store_without_timeout(path, log));
  EXPECT_LT(result.seconds, 2.0);
  expect_taken_over_from_the_dead(result);
}

// While compiling, the store's lease names this kernel and its lock is held.
TEST(CubinStoreLeases, AHolderLocksItsLease) {
  TempDir dir;
  const std::string path = dir.file("cache.sqlite");
  Logger log;
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  std::string host_while_compiling;
  std::optional<bool> held_while_compiling;
  std::vector<uint8_t> cubin;
  ASSERT_TRUE(store->get_or_compile(
      test_entry(0), compile_noting_lease(path, &host_while_compiling, &held_while_compiling),
      &cubin));
  EXPECT_EQ(host_while_compiling, locked_lease_host_name());
  EXPECT_EQ(held_while_compiling, std::optional<bool>(true));
  EXPECT_EQ(LeaseLocks(path).held_elsewhere(test_entry(0).id), std::optional<bool>(false));
}

// Whoever may write the cache may lock: the side file gets the cache file's owner and mode, also
// when root creates it for a cache of another user.
TEST(CubinStoreLeases, TheLockFileTakesTheCacheFilesOwnerAndMode) {
  TempDir dir;
  const std::string path = dir.file("cache.sqlite");
  { std::ofstream touch(path); }
  ASSERT_EQ(chmod(path.c_str(), 0660), 0);
  const bool root = geteuid() == 0;
  if (root) {
    ASSERT_EQ(chown(path.c_str(), 65534, 65534), 0);
  }
  Logger log;
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  ASSERT_TRUE(store->persistent());
  struct stat side_file {};
  ASSERT_EQ(stat(lease_locks_path(path).c_str(), &side_file), 0);
  EXPECT_EQ(side_file.st_mode & 0777, 0660u);
  if (root) {
    EXPECT_EQ(side_file.st_uid, 65534u);
  }
}

// Without write access to the side file a store still works, with one warning; its leases record
// no lock (others then wait for the timeout, as for a holder on another machine:
// lease_timeout_test.cpp).
TEST(CubinStoreLeases, WithoutTheLockFileLeasesRecordNoLock) {
  TempDir dir;
  const std::string path = dir.file("cache.sqlite");
  ASSERT_TRUE(std::filesystem::create_directory(lease_locks_path(path)));
  Logger log;
  testing::internal::CaptureStderr();
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  const std::string warnings = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(store->persistent());
  EXPECT_EQ(count_warnings(warnings), 1) << warnings;
  EXPECT_NE(warnings.find("-leases"), std::string::npos) << warnings;
  std::string host_while_compiling;
  std::vector<uint8_t> cubin;
  ASSERT_TRUE(store->get_or_compile(test_entry(0),
                                    compile_noting_lease(path, &host_while_compiling), &cubin));
  EXPECT_EQ(host_while_compiling, lease_host_name());
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM leases"), 0);
}

// Another user's FIFO or link in the side file's place (a shared directory) is not opened: the
// store neither blocks on it nor locks through it.
TEST(CubinStoreLeases, AFifoOrLinkForTheLockFileIsNotOpened) {
  TempDir dir;
  for (const bool fifo : {true, false}) {
    SCOPED_TRACE(fifo ? "a FIFO" : "a symbolic link");
    const std::string path = dir.file(fifo ? "fifo.sqlite" : "link.sqlite");
    { std::ofstream touch(path); }
    if (fifo) {
      ASSERT_EQ(mkfifo(lease_locks_path(path).c_str(), 0644), 0);
    } else {
      { std::ofstream touch(dir.file("elsewhere")); }
      std::filesystem::create_symlink(dir.file("elsewhere"), lease_locks_path(path));
    }
    Logger log;
    testing::internal::CaptureStderr();
    std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
    const std::string warnings = testing::internal::GetCapturedStderr();
    EXPECT_TRUE(store->persistent());
    EXPECT_NE(warnings.find("-leases"), std::string::npos) << warnings;
  }
}

}  // namespace
}  // namespace smla::cache_test
