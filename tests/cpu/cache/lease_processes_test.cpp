// Eight processes (tensor-parallel ranks starting together) asking for the same ten kernels at
// once on one fresh file: every process gets every cubin, and each kernel is compiled once in
// total, not once per process.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <sstream>
#include <thread>

#include "cpu/cache/cache_test_support.h"

namespace smla::cache_test {
namespace {

constexpr int kProcesses = 8;
constexpr int kKernels = 10;

// Compiles kernel `index` slowly enough for the others to pile up on its lease, and appends
// one line per compile to `compile_log` (O_APPEND: lines from several processes never mix).
CompileFn logged_compile(int index, const std::string& compile_log) {
  return [index, compile_log](std::vector<uint8_t>* cubin, double* compile_ms) {
    int fd = open(compile_log.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0666);
    std::string line = std::to_string(index) + "\n";
    if (fd < 0 || write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
      return error(SMLA_ERR_INTERNAL, "cannot log the compile");
    }
    close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    *cubin = test_cubin(index, 16 * 1024);
    *compile_ms = 40;
    return ok_status();
  };
}

// The body of one rank; returns its exit code.
int rank_main(int rank, int start_pipe, const std::string& path, const std::string& compile_log) {
  char go = 0;
  if (read(start_pipe, &go, 1) != 0) return 2;  // returns 0 when the parent closes the pipe
  Logger log(SMLA_LOG_ERROR);
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  if (!store->persistent()) return 3;
  for (int step = 0; step < kKernels; ++step) {
    int index = (rank + step) % kKernels;  // ranks start on different kernels, then collide
    std::vector<uint8_t> cubin;
    if (!store->get_or_compile(test_entry(index), logged_compile(index, compile_log), &cubin)) {
      return 4;
    }
    if (cubin != test_cubin(index, 16 * 1024)) return 5;
  }
  return 0;
}

TEST(CubinStoreLeases, EightProcessesCompileEachKernelOnce) {
  TempDir dir;
  std::string path = dir.file("cache.sqlite");
  std::string compile_log = dir.file("compiles.log");
  int start[2];
  ASSERT_EQ(pipe(start), 0);
  std::vector<pid_t> ranks;
  for (int rank = 0; rank < kProcesses; ++rank) {
    std::fflush(nullptr);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(start[1]);
      _exit(rank_main(rank, start[0], path, compile_log));
    }
    ranks.push_back(pid);
  }
  close(start[0]);
  close(start[1]);  // all ranks go at once
  for (pid_t pid : ranks) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "rank exit status " << status;
  }

  std::map<int, int> compiles;
  std::istringstream lines(read_file_bytes(compile_log));
  for (std::string line; std::getline(lines, line);) ++compiles[std::stoi(line)];
  EXPECT_EQ(compiles.size(), static_cast<size_t>(kKernels));
  for (const auto& [index, count] : compiles) EXPECT_EQ(count, 1) << "kernel " << index;

  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM kernels"), kKernels);
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM leases"), 0);
  Logger log;
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  EXPECT_TRUE(store->verify().clean());
}

}  // namespace
}  // namespace smla::cache_test
