// The `leases` table: one row per kernel being compiled, naming the process that compiles it
// (pid, host, started). A lease is stale when it is older than the timeout (a hung holder, or
// one whose death cannot be seen from here), or when its holder is known to be gone: a holder on
// this machine's running kernel records so in its host (" boot:<boot id>") and holds the
// lease's lock (lease_locks.h) until it ends the lease; an unlocked lease of such a holder is
// one whose process has died. Statements here run inside the caller's write transaction.
#pragma once

#include <cstdint>
#include <string>

#include "cache/lease_locks.h"
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
  // `locks` are the leases of the store this table serves (lease_locks.h).
  LeaseTable(SqliteDb& db, int timeout_s, LeaseLocks& locks)
      : db_(db), timeout_s_(timeout_s), locks_(locks) {}

  // Takes the lease on `id` unless a live holder has it. `holder` is the previous holder for
  // kTakenOver and the current one for kHeld; `stale_reason` says why a lease was taken over.
  Status acquire(uint64_t id, int64_t now, LeaseState* state, LeaseHolder* holder,
                 std::string* stale_reason);
  // Deletes this process's lease on `id` and drops its lock; a lease another process has taken
  // over stays.
  Status release(uint64_t id);
  // Deletes every lease this store holds and drops their locks (when it stops using the file).
  Status release_all();

 private:
  // Why `holder`'s lease on `id` is stale at `now`, or "" while it is live.
  std::string stale_reason(uint64_t id, const LeaseHolder& holder, int64_t now) const;

  SqliteDb& db_;
  int timeout_s_;
  LeaseLocks& locks_;
};

// This process as leases record it: the host name and, where /proc shows it, the pid
// namespace ("node-3 pid:[4026531836]"); with the pid, unique on the machine.
std::string lease_host_name();

// What a holder that holds the lease's lock records as its host: lease_host_name() and the
// kernel's boot id ("node-3 pid:[4026531836] boot:0f3c...").
std::string locked_lease_host_name();

}  // namespace smla
