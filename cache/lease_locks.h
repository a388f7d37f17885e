// Whether a lease's holder is alive, told by the kernel rather than by its pid: while a process
// holds the lease on kernel `id` it holds a lock on byte `id` of the side file `<cache>-leases`
// (an open file description lock, Linux 3.15+), which the kernel drops when the process dies.
// Every process of the machine sees it whatever its pid namespace, so containers that share a
// cache directory, or a container restarted with its predecessor's pids, judge each other's
// leases correctly. The file holds no data.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>

namespace smla {

// Not thread-safe: the store's mutex guards it, as it guards the lease table.
class LeaseLocks {
 public:
  // Opens (or creates, with the cache file's owner and permission bits) the side file of the
  // cache at `cache_path`; null when it cannot be opened for writing. Holders without it
  // record no lock, and others wait for their leases to time out.
  static std::unique_ptr<LeaseLocks> open(const std::string& cache_path);
  ~LeaseLocks();
  LeaseLocks(const LeaseLocks&) = delete;
  LeaseLocks& operator=(const LeaseLocks&) = delete;

  // Takes the lock of `id` without waiting; false when another holds it (a holder whose lease
  // was taken over after the timeout, still running) or the call fails.
  bool lock(uint64_t id);
  void unlock(uint64_t id);
  void unlock_all();
  // Whether these locks hold `id` (another thread of this store compiles it).
  bool holds(uint64_t id) const { return held_.count(id) != 0; }
  // Whether another open of the file (any process, this one included) holds the lock of `id`;
  // nullopt when the kernel cannot say.
  std::optional<bool> held_elsewhere(uint64_t id) const;

 private:
  explicit LeaseLocks(int fd) : fd_(fd) {}
  int fd_;
  std::set<uint64_t> held_;
};

// The side file of the cache at `cache_path`.
std::string lease_locks_path(const std::string& cache_path);

// This boot of this machine's kernel (/proc/sys/kernel/random/boot_id; the same in every
// container of the machine, new after a reboot); "" when unknown.
std::string kernel_boot_id();

}  // namespace smla
