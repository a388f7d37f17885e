// The in-process cache: what a context uses with cache path "", and where a store whose file
// failed keeps its kernels from then on. Threads that ask for the same kernel at once compile it
// once: the first compiles, the others wait for it.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cache/cubin_store.h"

namespace smla {

class MemoryCubinStore final : public CubinStore {
 public:
  bool persistent() const override { return false; }
  std::string path() const override { return ""; }

  std::optional<std::vector<uint8_t>> find(uint64_t id) override;
  Status get_or_compile(const KernelEntry& entry, const CompileFn& compile,
                        std::vector<uint8_t>* cubin, bool* compiled = nullptr) override;

  Status list(std::vector<KernelEntry>* entries) override;
  Status stats(StoreStats* stats) override;
  VerifyReport verify() override;
  Status gc(int64_t max_bytes, const std::string& current_fingerprint, GcReport* report) override;

  Status put_tuning(const TuningRow& row) override;
  std::optional<TuningRow> find_tuning(uint64_t problem_id, int batch_bucket,
                                       const std::string& device_name, int sm_count,
                                       int driver_version) override;

 private:
  struct Kernel {
    KernelEntry entry;
    std::vector<uint8_t> cubin;
    uint64_t last_use = 0;  // a counter, not a clock: exact LRU order within one second
  };
  using TuningKey = std::tuple<uint64_t, int, std::string, int, int>;

  // Requires mutex_.
  std::optional<std::vector<uint8_t>> find_locked(uint64_t id);
  int64_t cubin_bytes_locked() const;

  std::mutex mutex_;
  std::condition_variable compile_finished_;
  std::map<uint64_t, Kernel> kernels_;
  std::set<uint64_t> compiling_;
  std::map<TuningKey, TuningRow> tuning_;
  uint64_t use_counter_ = 0;
};

}  // namespace smla
