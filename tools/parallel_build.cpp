#include "tools/parallel_build.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace smla::tools {

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

int64_t ParallelBuildReport::cubin_bytes() const {
  int64_t bytes = 0;
  for (const KernelBuildOutcome& k : kernels) bytes += k.cubin_bytes;
  return bytes;
}

ParallelBuildReport build_in_parallel(const KernelBuilder& builder,
                                      const std::vector<KernelKey>& keys, int jobs,
                                      const BuildProgressFn& progress) {
  const auto start = std::chrono::steady_clock::now();
  ParallelBuildReport report;
  report.counts.total = static_cast<int>(keys.size());
  report.kernels.resize(keys.size());
  std::atomic<size_t> next{0};
  std::mutex counts_mutex;
  const auto work = [&] {
    for (size_t i = next++; i < keys.size(); i = next++) {
      KernelBuildOutcome& outcome = report.kernels[i];
      outcome.key_text = keys[i].text();
      BuildResult built;
      outcome.status = builder.build(keys[i], /*allow_compile=*/true, &built);
      outcome.compiled = outcome.status && built.compiled;
      outcome.compile_ms = built.compile_ms;
      outcome.cubin_bytes = static_cast<int64_t>(built.cubin.size());
      std::lock_guard<std::mutex> lock(counts_mutex);
      int& count = !outcome.status    ? report.counts.failed
                   : outcome.compiled ? report.counts.compiled
                                      : report.counts.cached;
      ++count;
      if (progress) progress(report.counts);
    }
  };
  if (progress) progress(report.counts);
  if (jobs <= 0) jobs = static_cast<int>(std::thread::hardware_concurrency());
  const size_t workers = std::min(keys.size(), static_cast<size_t>(std::max(jobs, 1)));
  std::vector<std::thread> threads;
  for (size_t t = 1; t < workers; ++t) threads.emplace_back(work);
  work();  // the calling thread is one of the workers
  for (std::thread& thread : threads) thread.join();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace smla::tools
