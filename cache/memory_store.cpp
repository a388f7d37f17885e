#include "cache/memory_store.h"

#include <algorithm>
#include <ctime>
#include <utility>

namespace smla {

std::optional<std::vector<uint8_t>> MemoryCubinStore::find_locked(uint64_t id) {
  auto it = kernels_.find(id);
  if (it == kernels_.end()) return std::nullopt;
  Kernel& kernel = it->second;
  kernel.entry.last_used = std::time(nullptr);
  ++kernel.entry.hits;
  kernel.last_use = ++use_counter_;
  return kernel.cubin;
}

std::optional<std::vector<uint8_t>> MemoryCubinStore::find(uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  return find_locked(id);
}

Status MemoryCubinStore::get_or_compile(const KernelEntry& entry, const CompileFn& compile,
                                        std::vector<uint8_t>* cubin, bool* compiled) {
  if (compiled != nullptr) *compiled = false;
  std::unique_lock<std::mutex> lock(mutex_);
  // A thread that finds another compiling the same kernel waits; if that compile fails, the
  // waiter compiles itself (the loop comes round with nobody compiling).
  for (;;) {
    if (auto hit = find_locked(entry.id)) {
      *cubin = std::move(*hit);
      return ok_status();
    }
    if (compiling_.count(entry.id) == 0) break;
    compile_finished_.wait(lock);
  }
  compiling_.insert(entry.id);
  lock.unlock();

  std::vector<uint8_t> built;
  double compile_ms = 0;
  Status status = run_compile(compile, &built, &compile_ms);

  lock.lock();
  compiling_.erase(entry.id);
  if (status) {
    Kernel& kernel = kernels_[entry.id];
    kernel.entry = entry;
    kernel.entry.compile_ms = compile_ms;
    kernel.entry.cubin_bytes = static_cast<int64_t>(built.size());
    kernel.entry.created = kernel.entry.last_used = std::time(nullptr);
    kernel.entry.hits = 0;
    kernel.entry.origin = "memory";
    kernel.cubin = built;
    kernel.last_use = ++use_counter_;
    *cubin = std::move(built);
    if (compiled != nullptr) *compiled = true;
  }
  compile_finished_.notify_all();
  return status;
}

Status MemoryCubinStore::list(std::vector<KernelEntry>* entries) {
  std::lock_guard<std::mutex> lock(mutex_);
  entries->clear();
  for (const auto& [id, kernel] : kernels_) entries->push_back(kernel.entry);
  std::sort(entries->begin(), entries->end(),
            [](const KernelEntry& a, const KernelEntry& b) { return a.key_text < b.key_text; });
  return ok_status();
}

int64_t MemoryCubinStore::cubin_bytes_locked() const {
  int64_t bytes = 0;
  for (const auto& [id, kernel] : kernels_) bytes += kernel.entry.cubin_bytes;
  return bytes;
}

Status MemoryCubinStore::stats(StoreStats* stats) {
  std::lock_guard<std::mutex> lock(mutex_);
  *stats = StoreStats();
  stats->kernels = static_cast<int64_t>(kernels_.size());
  stats->cubin_bytes = cubin_bytes_locked();
  stats->tuning_rows = static_cast<int64_t>(tuning_.size());
  for (const auto& [id, kernel] : kernels_) stats->hits += kernel.entry.hits;
  return ok_status();
}

VerifyReport MemoryCubinStore::verify() {
  // Process memory is not a medium that rots between writes: there is nothing to check against.
  std::lock_guard<std::mutex> lock(mutex_);
  VerifyReport report;
  report.checked = static_cast<int64_t>(kernels_.size());
  return report;
}

Status MemoryCubinStore::gc(int64_t max_bytes, const std::string& current_fingerprint,
                            GcReport* gc_report) {
  std::lock_guard<std::mutex> lock(mutex_);
  GcReport& report = *gc_report;
  report = GcReport();
  report.bytes_before = cubin_bytes_locked();
  if (!current_fingerprint.empty()) {
    for (auto it = kernels_.begin(); it != kernels_.end();) {
      if (it->second.entry.fingerprint != current_fingerprint) {
        it = kernels_.erase(it);
        ++report.removed;
      } else {
        ++it;
      }
    }
  }
  if (max_bytes >= 0) {
    std::vector<std::pair<uint64_t, uint64_t>> by_use;  // (last use, id), oldest first
    for (const auto& [id, kernel] : kernels_) by_use.emplace_back(kernel.last_use, id);
    std::sort(by_use.begin(), by_use.end());
    int64_t bytes = cubin_bytes_locked();
    for (const auto& [last_use, id] : by_use) {
      if (bytes <= max_bytes) break;
      bytes -= kernels_[id].entry.cubin_bytes;
      kernels_.erase(id);
      ++report.removed;
    }
  }
  report.bytes_after = cubin_bytes_locked();
  return ok_status();
}

Status MemoryCubinStore::put_tuning(const TuningRow& row) {
  std::lock_guard<std::mutex> lock(mutex_);
  tuning_[TuningKey(row.problem_id, row.batch_bucket, row.device_name, row.sm_count,
                    row.driver_version)] = row;
  return ok_status();
}

std::optional<TuningRow> MemoryCubinStore::find_tuning(uint64_t problem_id, int batch_bucket,
                                                       const std::string& device_name, int sm_count,
                                                       int driver_version) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it =
      tuning_.find(TuningKey(problem_id, batch_bucket, device_name, sm_count, driver_version));
  if (it == tuning_.end()) return std::nullopt;
  return it->second;
}

}  // namespace smla
