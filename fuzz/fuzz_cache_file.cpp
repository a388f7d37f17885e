// libFuzzer target: cache files (cache/, docs/fuzzing.md). The input is a cache file's bytes,
// mutated from real ones (fuzz/corpus/fuzz_cache_file, made by fuzz_cache_seeds). It is written
// to a scratch file, which is checked (verify_cache_file, as `smla cache verify` does) and
// opened as a context opens its user cache (CubinStore::open), calling what a context and the
// CLI call on it: find, list, stats, find_tuning, get_or_compile, verify and gc. A damaged
// file may be reported as anything (a failed status, a miss, a bad entry); checked is that
// nothing crashes, hangs, reads memory it must not (ASan, UBSan) or throws out of the store.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "cache/cubin_store.h"
#include "cache/file_verify.h"
#include "cache_entries.h"

namespace smla::fuzz {
namespace {

// A scratch directory of this process in $TMPDIR, else in /dev/shm (memory: SQLite's syncs
// cost nothing there), else in /tmp; removed at exit. Never destroyed itself: the exit handler
// that removes it runs after static destructors.
const std::string& scratch_dir() {
  static const std::string* dir = new std::string([] {
    const char* tmp = std::getenv("TMPDIR");
    std::string parent = tmp && tmp[0] ? tmp : access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string made = parent + "/smla-fuzz-cache-" + std::to_string(getpid());
    std::error_code ignored;
    std::filesystem::create_directories(made, ignored);
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(scratch_dir(), ignored);
    });
    return made;
  }());
  return *dir;
}

// The cache file with `bytes` and nothing beside it (no -wal, -shm or -leases of a previous
// input: SQLite would read a stale WAL as part of this file).
std::string write_cache_file(const uint8_t* data, size_t size) {
  const std::string path = scratch_dir() + "/cache.sqlite";
  for (const char* suffix : {"", "-wal", "-shm", "-journal", "-leases"}) {
    std::error_code ignored;
    std::filesystem::remove(path + suffix, ignored);
  }
  std::ofstream file(path, std::ios::binary);
  file.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  file.close();
  if (!file) {
    std::fprintf(stderr, "fuzz_cache_file: cannot write %s\n", path.c_str());
    std::abort();
  }
  return path;
}

// The store calls a context (find, get_or_compile, find_tuning) and the CLI (ls, stats, verify,
// gc) make on a user cache.
void exercise_store(CubinStore& store) {
  std::vector<KernelEntry> entries;
  std::vector<uint64_t> ids;
  if (store.list(&entries)) {
    for (size_t i = 0; i < entries.size() && i < 8; ++i) ids.push_back(entries[i].id);
  }
  for (int i = 0; i < kSeedKernels; ++i) ids.push_back(seed_entry(i).id);
  for (const uint64_t id : ids) (void)store.find(id);
  StoreStats stats;
  (void)store.stats(&stats);
  const TuningRow row = seed_tuning_row();
  (void)store.find_tuning(row.problem_id, row.batch_bucket, row.device_name, row.sm_count,
                          row.driver_version);
  // A kernel the file does not have: compiled (here, made up) and stored into the file.
  const KernelEntry fresh = seed_entry(kSeedKernels);
  const CompileFn compile = [](std::vector<uint8_t>* cubin, double* compile_ms) {
    *cubin = seed_cubin(kSeedKernels);
    *compile_ms = 1;
    return ok_status();
  };
  std::vector<uint8_t> cubin;
  (void)store.get_or_compile(fresh, compile, &cubin);
  (void)store.verify();
  GcReport gc;
  (void)store.gc(int64_t{1} << 10, kSeedFingerprint, &gc);
}

void run(const uint8_t* data, size_t size) {
  const std::string path = write_cache_file(data, size);
  // Short waits: no other process holds the file, so any wait is the store waiting on itself.
  constexpr int kBusyTimeoutMs = 50;
  VerifyReport report;
  (void)verify_cache_file(path, kBusyTimeoutMs, &report);
  static const Logger quiet(SMLA_LOG_ERROR);  // every damaged file is a warning: too many lines
  CubinStore::Options options;
  options.path = path;
  options.busy_timeout_ms = kBusyTimeoutMs;
  options.lease_timeout_s = 1;
  options.lease_poll_ms = 1;
  Status file_status;
  std::unique_ptr<CubinStore> store = CubinStore::open(options, quiet, &file_status);
  exercise_store(*store);
  store.reset();
  VerifyReport after;
  (void)verify_cache_file(path, kBusyTimeoutMs, &after);
}

}  // namespace
}  // namespace smla::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    smla::fuzz::run(data, size);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_cache_file: an exception escaped the cache: %s\n", e.what());
    std::abort();
  }
  return 0;
}
