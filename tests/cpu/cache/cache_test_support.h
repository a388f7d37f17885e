// Helpers shared by the cache tests: scratch directories, deterministic kernels and cubins, a
// side connection to poke at a cache file the way a person with the sqlite3 shell would, and
// child processes (unprivileged when the tests run as root, so file permissions hold).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cache/cubin_store.h"
#include "support/cache_file.h"
#include "support/scratch.h"

namespace smla::cache_test {

using test::flip_cubin_byte;
using test::read_file_bytes;
using test::sql_exec;
using test::sql_int;
using test::TempDir;

// Kernel `index` of a test: a key text, arch and fingerprint, and an id spread over all 64 bits
// (high-bit ids exercise the signed storage).
KernelEntry test_entry(int index, const std::string& fingerprint = "fp-test");
// The cubin of kernel `index`: `bytes` deterministic pseudo-random bytes.
std::vector<uint8_t> test_cubin(int index, size_t bytes = 4096);
// Compiles kernel `index` (test_cubin) and counts the calls.
CompileFn counting_compile(int index, std::atomic<int>* calls, size_t bytes = 4096);

// Options of a store on `path` ("" = memory only), with a read-only system cache when
// `system_path` is given.
CubinStore::Options options_for(const std::string& path, const std::string& system_path = "");

// Number of warning lines a Logger wrote into `log_text`.
int count_warnings(const std::string& log_text);

struct ChildResult {
  int exit_code = -1;
  std::string stderr_text;  // everything the child wrote to stderr
};
// Runs `body` in a forked child and waits for it. `body` returns "" on success or a message
// saying what failed (the child prints it and exits 1). When the tests run as root the child
// first becomes `nobody`, so that permission bits mean what they say.
ChildResult run_unprivileged(const std::function<std::string()>& body);

// The pid of a child that has exited and been reaped: no process has it (until it is reused).
pid_t dead_pid();

}  // namespace smla::cache_test
