// The compile leases one store holds, and whether their holders are alive, told by the kernel
// rather than by pids: while a store holds the lease on kernel `id` it holds a lock on byte `id`
// of the side file `<cache>-leases` (an open file description lock, Linux 3.15+), which the
// kernel drops when the process dies. Every process of the machine sees it whatever its pid
// namespace, so containers that share a cache directory, or a container restarted with its
// predecessor's pids, judge each other's leases correctly. The file holds no data.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace smla {

// Not thread-safe: the store's mutex guards it, as it guards the lease table.
class LeaseLocks {
 public:
  // Opens the side file of the cache file `cache_file` (its real path: every path to one cache
  // must meet in one side file), creating it with the cache file's owner and permission bits.
  // Without write access the locks are not taken (`can_lock()` is false): this store's leases
  // are then judged by their timeout only; without any access other holders are too.
  explicit LeaseLocks(const std::string& cache_file);
  ~LeaseLocks();
  LeaseLocks(const LeaseLocks&) = delete;
  LeaseLocks& operator=(const LeaseLocks&) = delete;

  bool can_lock() const { return fd_ >= 0 && writable_; }
  // Records the lease on `id` as this store's and takes its lock without waiting; returns
  // whether the lock was taken (not when another holds it: a holder whose lease was taken over
  // after the timeout, still running).
  bool take(uint64_t id);
  // Forgets the lease on `id` and drops its lock.
  void drop(uint64_t id);
  void drop_all();
  // The leases this store holds.
  const std::map<uint64_t, bool>& held() const { return held_; }
  bool holds(uint64_t id) const { return held_.count(id) != 0; }
  // Whether another open of the side file (any process, or another store of this one) holds the
  // lock of `id`; nullopt when it cannot be told.
  std::optional<bool> held_elsewhere(uint64_t id) const;

 private:
  friend void close_lease_locks_in_child();

  int fd_ = -1;
  bool writable_ = false;
  std::map<uint64_t, bool> held_;  // lease id -> whether its lock is held
};

// The side file of the cache file `cache_file`.
std::string lease_locks_path(const std::string& cache_file);

// This boot of this machine's kernel (/proc/sys/kernel/random/boot_id; the same in every
// container of the machine, new after a reboot); "" when unknown.
std::string kernel_boot_id();

}  // namespace smla
