// The read-only system cache is consulted before the user cache and never written: not its
// kernels, not their hits, not even a side file next to it.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "cpu/cache/cache_test_support.h"
#include "support/store_reads.h"

namespace smla::cache_test {
namespace {

// A prewarmed system cache holding kernels 0 and 1, as a packaging step would ship it: in
// rollback-journal mode, so that a reader needs no -wal or -shm file beside it.
std::string make_system_cache(const TempDir& dir) {
  std::string path = dir.file("system.sqlite");
  Logger log;
  std::atomic<int> calls{0};
  std::vector<uint8_t> cubin;
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  for (int index = 0; index < 2; ++index) {
    EXPECT_TRUE(store->get_or_compile(test_entry(index), counting_compile(index, &calls), &cubin));
  }
  store.reset();
  sql_exec(path, "PRAGMA journal_mode = DELETE");
  return path;
}

std::set<std::string> directory_listing(const std::string& directory) {
  std::set<std::string> names;
  for (const auto& item : std::filesystem::directory_iterator(directory)) {
    names.insert(item.path().filename().string());
  }
  return names;
}

// A system cache as `smla cache build` leaves it (WAL journaling) in a directory the reader may
// not write, as a package installs it: SQLite cannot create the -shm file a WAL reader needs
// there, so the store opens it immutable. Run as `nobody` (see run_unprivileged).
TEST(CubinStoreSystemCache, WalFileInAReadOnlyDirectoryIsConsulted) {
  TempDir system_dir;
  const std::string system_path = system_dir.file("system.sqlite");
  {
    Logger log;
    std::atomic<int> calls{0};
    std::vector<uint8_t> cubin;
    std::unique_ptr<CubinStore> store = CubinStore::open(options_for(system_path), log);
    ASSERT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin));
  }
  // WAL journaling (header bytes 18, 19 are 2), and no -shm file a reader could use instead.
  const std::string header = read_file_bytes(system_path).substr(0, 20);
  ASSERT_EQ(header[18], 2);
  ASSERT_EQ(header[19], 2);
  ASSERT_FALSE(std::filesystem::exists(system_path + "-shm"));
  ASSERT_EQ(chmod(system_dir.path().c_str(), 0555), 0);
  const ChildResult child = run_unprivileged([&]() -> std::string {
    Logger log;
    const CubinStore::Options options = options_for("", system_path);
    std::unique_ptr<CubinStore> store = CubinStore::open(options, log);
    std::atomic<int> calls{0};
    std::vector<uint8_t> cubin;
    bool compiled = false;
    if (!store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin, &compiled)) {
      return "get_or_compile failed";
    }
    if (compiled || calls != 0) return "the system cache was not consulted";
    return cubin == test_cubin(0) ? "" : "wrong cubin";
  });
  ASSERT_EQ(chmod(system_dir.path().c_str(), 0755), 0);
  EXPECT_EQ(child.exit_code, 0) << child.stderr_text;
  EXPECT_EQ(count_warnings(child.stderr_text), 0) << child.stderr_text;
}

TEST(CubinStoreSystemCache, ConsultedFirstAndNeverWritten) {
  TempDir system_dir;
  TempDir user_dir;
  std::string system_path = make_system_cache(system_dir);
  std::string before = read_file_bytes(system_path);
  std::set<std::string> files_before = directory_listing(system_dir.path());

  for (std::string user_path : {user_dir.file("user.sqlite"), std::string()}) {
    SCOPED_TRACE(user_path.empty() ? "memory-only user cache" : "file user cache");
    Logger log;
    const CubinStore::Options options = options_for(user_path, system_path);
    testing::internal::CaptureStderr();
    std::unique_ptr<CubinStore> store = CubinStore::open(options, log);
    std::atomic<int> calls{0};
    for (int round = 0; round < 2; ++round) {
      for (int index = 0; index < 3; ++index) {
        std::vector<uint8_t> cubin;
        bool compiled = false;
        ASSERT_TRUE(store->get_or_compile(test_entry(index), counting_compile(index, &calls),
                                          &cubin, &compiled));
        EXPECT_EQ(cubin, test_cubin(index));
        EXPECT_EQ(compiled, index == 2 && round == 0);
      }
    }
    ASSERT_TRUE(store->find(test_entry(1).id).has_value());
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
    EXPECT_EQ(calls, 1);  // only kernel 2, which the system cache lacks

    std::vector<KernelEntry> entries = test::listed(*store);
    ASSERT_EQ(entries.size(), 3u);
    EXPECT_EQ(entries[0].origin, "system");
    EXPECT_EQ(entries[1].origin, "system");
    EXPECT_EQ(entries[2].origin, user_path.empty() ? "memory" : "user");
    EXPECT_EQ(test::stats_of(*store).kernels, 1);  // stats describe the user cache
    EXPECT_TRUE(store->verify().clean());
    if (!user_path.empty()) {
      EXPECT_EQ(sql_int(user_path, "SELECT count(*) FROM kernels"), 1);
    }
  }
  EXPECT_EQ(read_file_bytes(system_path), before);
  EXPECT_EQ(directory_listing(system_dir.path()), files_before);
  EXPECT_EQ(sql_int(system_path, "SELECT sum(hits) FROM kernels"), 0);
}

TEST(CubinStoreSystemCache, BadSystemBlobFallsBackToTheUserCacheAndStays) {
  TempDir dir;
  std::string system_path = make_system_cache(dir);
  flip_cubin_byte(system_path, test_entry(0).id, 100);
  std::string before = read_file_bytes(system_path);

  Logger log;
  const CubinStore::Options options = options_for(dir.file("user.sqlite"), system_path);
  std::unique_ptr<CubinStore> store = CubinStore::open(options, log);
  std::atomic<int> calls{0};
  testing::internal::CaptureStderr();
  for (int round = 0; round < 3; ++round) {
    std::vector<uint8_t> cubin;
    ASSERT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin));
    EXPECT_EQ(cubin, test_cubin(0));
  }
  std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_warnings(warnings), 1) << warnings;  // once, not once per lookup
  EXPECT_EQ(calls, 1);                                 // rebuilt into the user cache, once

  VerifyReport report = store->verify();
  ASSERT_EQ(report.bad.size(), 1u);
  EXPECT_EQ(report.bad[0], "system: " + test_entry(0).key_text);
  EXPECT_EQ(report.checked, 3);  // one user entry, two system entries
  EXPECT_EQ(read_file_bytes(system_path), before);
}

TEST(CubinStoreSystemCache, MissingSystemCacheWarnsOnceAndTheUserCacheWorks) {
  TempDir dir;
  Logger log;
  const CubinStore::Options options =
      options_for(dir.file("user.sqlite"), dir.file("no-such-system.sqlite"));
  testing::internal::CaptureStderr();
  std::unique_ptr<CubinStore> store = CubinStore::open(options, log);
  std::atomic<int> calls{0};
  for (int round = 0; round < 2; ++round) {
    std::vector<uint8_t> cubin;
    ASSERT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin));
  }
  std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_warnings(warnings), 1) << warnings;
  EXPECT_TRUE(store->persistent());
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(std::filesystem::exists(options.system_path));  // read-only: never created
}

TuningRow tuning_row(int bucket, const std::string& config) {
  TuningRow row;
  row.problem_id = 7;
  row.batch_bucket = bucket;
  row.device_name = "NVIDIA H200";
  row.sm_count = 132;
  row.driver_version = 13000;
  row.config_text = config;
  row.measured_us = 10;
  row.baseline_us = 12;
  return row;
}

// The tuning row of a (problem, bucket, device) comes from the user cache (`smla tune` on this
// machine), else from the system cache (shipped with the deployment); rows of another device are
// not found in either.
TEST(CubinStoreSystemCache, TuningRowsOfTheUserCacheFirstThenOfTheSystemCache) {
  TempDir dir;
  const std::string system_path = make_system_cache(dir);
  {
    Logger log;
    std::unique_ptr<CubinStore> system = CubinStore::open(options_for(system_path), log);
    ASSERT_TRUE(system->put_tuning(tuning_row(16, "system-16")));
    ASSERT_TRUE(system->put_tuning(tuning_row(32, "system-32")));
  }
  sql_exec(system_path, "PRAGMA journal_mode = DELETE");
  Logger log;
  const CubinStore::Options options = options_for(dir.file("user.sqlite"), system_path);
  std::unique_ptr<CubinStore> store = CubinStore::open(options, log);
  ASSERT_TRUE(store->put_tuning(tuning_row(16, "user-16")));
  const auto config = [&](int bucket, const std::string& device) {
    const std::optional<TuningRow> row = store->find_tuning(7, bucket, device, 132, 13000);
    return row ? row->config_text : std::string("none");
  };
  testing::internal::CaptureStderr();
  EXPECT_EQ(config(16, "NVIDIA H200"), "user-16");
  EXPECT_EQ(config(32, "NVIDIA H200"), "system-32");
  EXPECT_EQ(config(64, "NVIDIA H200"), "none");
  EXPECT_EQ(config(32, "NVIDIA H100 80GB HBM3"), "none");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

// A system cache whose tuning rows cannot be read is dropped with one warning, as one whose
// kernels cannot: the user cache's rows and kernels still serve, nothing is fatal.
TEST(CubinStoreSystemCache, UnreadableSystemTuningRowsDropTheSystemCacheOnce) {
  TempDir dir;
  const std::string system_path = make_system_cache(dir);
  sql_exec(system_path, "DROP TABLE tuning");
  Logger log;
  const CubinStore::Options options = options_for(dir.file("user.sqlite"), system_path);
  std::unique_ptr<CubinStore> store = CubinStore::open(options, log);
  ASSERT_TRUE(store->put_tuning(tuning_row(16, "user-16")));
  testing::internal::CaptureStderr();
  for (int round = 0; round < 2; ++round) {
    EXPECT_FALSE(store->find_tuning(7, 32, "NVIDIA H200", 132, 13000).has_value());
    const std::optional<TuningRow> user = store->find_tuning(7, 16, "NVIDIA H200", 132, 13000);
    ASSERT_TRUE(user.has_value());
    EXPECT_EQ(user->config_text, "user-16");
  }
  std::atomic<int> calls{0};
  std::vector<uint8_t> cubin;
  ASSERT_TRUE(store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin));
  const std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_warnings(warnings), 1) << warnings;
  EXPECT_NE(warnings.find("no longer consulted"), std::string::npos) << warnings;
  EXPECT_EQ(calls, 1);  // the dropped system cache's kernel 0 is not used
}

// A system cache path naming a FIFO is no cache either: one warning, not a wait forever for a
// writer (a read-only open of a FIFO blocks). Run in a child that an alarm ends.
TEST(CubinStoreSystemCache, AFifoIsNoSystemCache) {
  TempDir dir;
  const std::string fifo = dir.file("system.sqlite");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0444), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(30);
    Logger log;
    const CubinStore::Options options = options_for(dir.file("user.sqlite"), fifo);
    testing::internal::CaptureStderr();
    std::unique_ptr<CubinStore> store = CubinStore::open(options, log);
    std::atomic<int> calls{0};
    std::vector<uint8_t> cubin;
    const bool compiled =
        store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin) && calls == 1;
    const std::string warnings = testing::internal::GetCapturedStderr();
    const bool warned =
        count_warnings(warnings) == 1 && warnings.find("not a regular file") != std::string::npos;
    _exit(compiled && warned && store->persistent() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "wait status " << status;
}

}  // namespace
}  // namespace smla::cache_test
