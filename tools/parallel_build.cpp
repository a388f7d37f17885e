#include "tools/parallel_build.h"

#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "runtime/kernel_builder.h"

namespace smla::tools {
namespace {

KernelBuildOutcome build_one(const CubinStore& store, const KernelBuilder& builder,
                             const KernelKey& key) {
  KernelBuildOutcome outcome;
  outcome.key_text = key.text();
  BuildResult built;
  outcome.status = builder.build(key, /*allow_compile=*/true, &built);
  outcome.compiled = outcome.status && built.compiled;
  // A store that is not persistent (now) kept what it compiled in memory; what it found without
  // compiling came from a file (a read-only one), since each key is built once.
  outcome.kept = outcome.status && (store.persistent() || !built.compiled);
  outcome.compile_ms = built.compile_ms;
  outcome.cubin_bytes = static_cast<int64_t>(built.cubin.size());
  return outcome;
}

void count(BuildCounts* counts, const KernelBuildOutcome& outcome) {
  int& n = !outcome.status ? counts->failed : outcome.compiled ? counts->compiled : counts->cached;
  ++n;
}

// A worker process: takes the next key from the counter the workers share until none is left,
// builds it into its own store and writes one JSON line per kernel to `fd`.
[[noreturn]] void run_worker(const CubinStore::Options& store_options, const Logger& log,
                             const std::vector<KernelKey>& keys, std::atomic<size_t>* next,
                             int fd) {
  // The warnings of opening the store (a file it degrades from) the parent has printed already;
  // what the store says afterwards (a cubin that failed its check) only this worker can.
  Logger store_log(SMLA_LOG_ERROR);
  std::unique_ptr<CubinStore> store = CubinStore::open(store_options, store_log);
  store_log.set_level(log.level());
  const KernelBuilder builder(*store, log);
  for (size_t i = (*next)++; i < keys.size(); i = (*next)++) {
    const KernelBuildOutcome o = build_one(*store, builder, keys[i]);
    std::string line = nlohmann::json{{"index", i},
                                      {"code", static_cast<int>(o.status.code())},
                                      {"message", o.status.message()},
                                      {"compiled", o.compiled},
                                      {"kept", o.kept},
                                      {"compile_ms", o.compile_ms},
                                      {"cubin_bytes", o.cubin_bytes}}
                           .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                       "\n";
    for (size_t written = 0; written < line.size();) {
      const ssize_t n = write(fd, line.data() + written, line.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        store.reset();
        _exit(3);  // the parent is gone
      }
      written += static_cast<size_t>(n);
    }
  }
  // Closed here: the last connection to close folds the write-ahead log into the file, which a
  // reader that may not write (one that opens it immutable) needs.
  store.reset();
  _exit(0);  // no destructors of the parent's state in the child
}

struct Worker {
  pid_t pid = -1;
  int fd = -1;
  std::string pending;  // an incomplete line
};

}  // namespace

double ParallelBuildReport::median_compile_ms() const {
  std::vector<double> ms;
  for (const KernelBuildOutcome& k : kernels) {
    if (k.compiled) ms.push_back(k.compile_ms);
  }
  if (ms.empty()) return 0;
  std::sort(ms.begin(), ms.end());
  const size_t mid = ms.size() / 2;
  return ms.size() % 2 == 1 ? ms[mid] : (ms[mid - 1] + ms[mid]) / 2;
}

int ParallelBuildReport::not_kept() const {
  int count = 0;
  for (const KernelBuildOutcome& k : kernels) count += k.status && !k.kept ? 1 : 0;
  return count;
}

int64_t ParallelBuildReport::cubin_bytes() const {
  int64_t bytes = 0;
  for (const KernelBuildOutcome& k : kernels) bytes += k.cubin_bytes;
  return bytes;
}

ParallelBuildReport build_in_parallel(const CubinStore::Options& store_options, const Logger& log,
                                      const std::vector<KernelKey>& keys, int jobs,
                                      const BuildProgressFn& progress) {
  const auto start = std::chrono::steady_clock::now();
  ParallelBuildReport report;
  report.counts.total = static_cast<int>(keys.size());
  report.kernels.resize(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) report.kernels[i].key_text = keys[i].text();
  if (progress) progress(report.counts);
  if (jobs <= 0) jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const size_t workers = std::min(keys.size(), static_cast<size_t>(jobs));
  std::vector<bool> reported(keys.size(), false);
  const auto take = [&](size_t i, KernelBuildOutcome outcome) {
    outcome.key_text = keys[i].text();
    report.kernels[i] = std::move(outcome);
    reported[i] = true;
    count(&report.counts, report.kernels[i]);
    if (progress) progress(report.counts);
  };
  if (workers <= 1) {
    const std::unique_ptr<CubinStore> store = CubinStore::open(store_options, log);
    const KernelBuilder builder(*store, log);
    for (size_t i = 0; i < keys.size(); ++i) take(i, build_one(*store, builder, keys[i]));
  } else {
    // The next key to build, shared by the workers (an atomic in memory they all map).
    void* shared = mmap(nullptr, sizeof(std::atomic<size_t>), PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    auto* next = shared == MAP_FAILED ? nullptr : new (shared) std::atomic<size_t>(0);
    static_assert(std::atomic<size_t>::is_always_lock_free, "shared between processes");
    std::fflush(nullptr);  // nothing buffered is written twice
    std::vector<Worker> pool;
    for (size_t w = 0; next != nullptr && w < workers; ++w) {
      int fds[2];
      if (pipe(fds) != 0) break;
      const pid_t pid = fork();
      if (pid == 0) {
        close(fds[0]);
        for (const Worker& other : pool) close(other.fd);
        run_worker(store_options, log, keys, next, fds[1]);
      }
      close(fds[1]);
      if (pid < 0) {
        close(fds[0]);
        break;
      }
      pool.push_back({pid, fds[0], {}});
    }
    const size_t started = pool.size();
    for (size_t open = started; open > 0;) {
      std::vector<pollfd> polls;
      for (const Worker& w : pool) {
        if (w.fd >= 0) polls.push_back({w.fd, POLLIN, 0});
      }
      if (poll(polls.data(), polls.size(), -1) < 0 && errno != EINTR) break;
      for (Worker& w : pool) {
        if (w.fd < 0) continue;
        const auto ready =
            std::find_if(polls.begin(), polls.end(), [&](const pollfd& p) { return p.fd == w.fd; });
        if (ready == polls.end() || ready->revents == 0) continue;
        char buffer[4096];
        const ssize_t n = read(w.fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          close(w.fd);
          w.fd = -1;
          --open;
          continue;
        }
        w.pending.append(buffer, static_cast<size_t>(n));
        for (size_t end; (end = w.pending.find('\n')) != std::string::npos;) {
          const nlohmann::json line = nlohmann::json::parse(w.pending.substr(0, end), nullptr,
                                                            /*allow_exceptions=*/false);
          w.pending.erase(0, end + 1);
          if (line.is_discarded()) continue;
          const size_t i = line.value("index", keys.size());
          if (i >= keys.size() || reported[i]) continue;
          KernelBuildOutcome outcome;
          const int code = line.value("code", static_cast<int>(SMLA_ERR_INTERNAL));
          outcome.status = code == SMLA_OK
                               ? ok_status()
                               : Status(static_cast<smla_status>(code), line.value("message", ""));
          outcome.compiled = line.value("compiled", false);
          outcome.kept = line.value("kept", false);
          outcome.compile_ms = line.value("compile_ms", 0.0);
          outcome.cubin_bytes = line.value("cubin_bytes", int64_t{0});
          take(i, std::move(outcome));
        }
      }
    }
    std::string death;
    for (const Worker& w : pool) {
      int status = 0;
      while (waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
      }
      if (WIFSIGNALED(status)) {
        death = "a compiling process was killed by signal " + std::to_string(WTERMSIG(status));
      } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        death = "a compiling process failed";
      }
    }
    // A key a worker took but did not report failed with it; keys no worker took (none could be
    // started) are built here.
    const size_t taken = next == nullptr ? 0 : std::min(next->load(), keys.size());
    if (shared != MAP_FAILED) munmap(shared, sizeof(std::atomic<size_t>));
    std::unique_ptr<CubinStore> store;
    std::unique_ptr<KernelBuilder> builder;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (reported[i]) continue;
      if (i < taken && started > 0) {
        KernelBuildOutcome outcome;
        outcome.status = Status(SMLA_ERR_INTERNAL, death.empty() ? "not built" : death);
        take(i, std::move(outcome));
        continue;
      }
      if (!builder) {
        store = CubinStore::open(store_options, log);
        builder = std::make_unique<KernelBuilder>(*store, log);
      }
      take(i, build_one(*store, *builder, keys[i]));
    }
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace smla::tools
