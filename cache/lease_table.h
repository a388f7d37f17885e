// The `leases` table: one row per kernel being compiled, naming the process that compiles it
// (pid, host, started). A lease is stale when its holder is gone: a pid of this host and pid
// namespace that no longer exists or now belongs to a process started after the lease was taken
// (pids are reused, and a restarted container often gets the same one), or a lease older than
// the timeout (a hung or remote holder, or one in another container). Statements here run inside
// the caller's write transaction.
#pragma once

#include <cstdint>
#include <string>

#include "cache/sqlite_db.h"

namespace smla {

struct LeaseHolder {
  int64_t pid = 0;
  std::string host;
  int64_t started = 0;  // unix seconds
};

enum class LeaseState {
  kTaken,      // the lease was free: this process holds it now
  kTakenOver,  // the lease was stale: this process holds it now
  kHeld,       // another live process holds it
};

class LeaseTable {
 public:
  LeaseTable(SqliteDb& db, int timeout_s) : db_(db), timeout_s_(timeout_s) {}

  // Takes the lease on `id` unless a live holder has it. `holder` is the previous holder for
  // kTakenOver and the current one for kHeld; `stale_reason` says why a lease was taken over.
  Status acquire(uint64_t id, int64_t now, LeaseState* state, LeaseHolder* holder,
                 std::string* stale_reason);
  // Deletes this process's lease on `id`; a lease another process has taken over stays.
  Status release(uint64_t id);
  // Deletes every lease this process holds (when it stops using the file).
  Status release_all();

 private:
  // Why `holder`'s lease is stale at `now`, or "" while it is live.
  std::string stale_reason(const LeaseHolder& holder, int64_t now) const;

  SqliteDb& db_;
  int timeout_s_;
};

// This process's host as leases record it: the host name and, where /proc shows it, the pid
// namespace ("node-3 pid:[4026531836]").
std::string lease_host_name();

}  // namespace smla
