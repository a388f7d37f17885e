#include "cache/lease_table.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace smla {

std::string lease_host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) std::snprintf(name, sizeof(name), "unknown");
  // NOTE: containers of one pod share a host name but not their pids; with the pid namespace
  // (its /proc link, "pid:[inode]") the pid names one process of the machine.
  char pid_namespace[64] = {};
  const ssize_t length = readlink("/proc/self/ns/pid", pid_namespace, sizeof(pid_namespace) - 1);
  if (length <= 0) return name;
  return fmt::format("{} {}", name, std::string(pid_namespace, static_cast<size_t>(length)));
}

std::string locked_lease_host_name() {
  const std::string boot_id = kernel_boot_id();
  return boot_id.empty() ? lease_host_name() : lease_host_name() + " boot:" + boot_id;
}

std::string LeaseTable::stale_reason(uint64_t id, const LeaseHolder& holder, int64_t now) const {
  if (now - holder.started > timeout_s_) {
    return fmt::format("it is older than the lease timeout ({} s)", timeout_s_);
  }
  // Only a holder that locked the lease on this very kernel (not another machine's, not one
  // before a reboot) can be judged by its lock; a lease of this store's own is live.
  const std::string boot_id = kernel_boot_id();
  const std::string suffix = " boot:" + boot_id;
  const bool locked_here =
      !boot_id.empty() && holder.host.size() > suffix.size() &&
      holder.host.compare(holder.host.size() - suffix.size(), suffix.size(), suffix) == 0;
  if (!locked_here || locks_.holds(id)) return "";
  if (locks_.held_elsewhere(id) == false) {
    return "its process no longer holds the lease's lock (it has exited)";
  }
  return "";
}

Status LeaseTable::acquire(uint64_t id, int64_t now, LeaseState* state, LeaseHolder* holder,
                           std::string* stale_reason_text) {
  SqliteStatement select;
  SMLA_TRY(db_.prepare("SELECT pid, host, started FROM leases WHERE id = ?", &select));
  select.bind(1, to_sql(id));
  bool has_row = false;
  SMLA_TRY(select.step(&has_row));
  if (has_row) {
    holder->pid = select.column_int64(0);
    holder->host = select.column_text(1);
    holder->started = select.column_int64(2);
    *stale_reason_text = stale_reason(id, *holder, now);
    if (stale_reason_text->empty()) {
      *state = LeaseState::kHeld;
      return ok_status();
    }
  }
  // NOTE: a holder whose lease was taken over after the timeout may still hold the lock; this
  // lease then records none.
  const bool locked = locks_.take(id);
  SqliteStatement take;
  SMLA_TRY(db_.prepare("INSERT OR REPLACE INTO leases (id, pid, host, started) VALUES (?, ?, ?, ?)",
                       &take));
  SMLA_TRY(take.bind(1, to_sql(id))
               .bind(2, static_cast<int64_t>(getpid()))
               .bind(3, locked ? locked_lease_host_name() : lease_host_name())
               .bind(4, now)
               .run());
  *state = has_row ? LeaseState::kTakenOver : LeaseState::kTaken;
  return ok_status();
}

// NOTE: the lock goes before the commit that deletes the row; no other process can look at the
// lease in between, because every lease decision runs in a write transaction.
Status LeaseTable::release(uint64_t id) {
  const auto lease = locks_.held().find(id);
  const bool locked = lease != locks_.held().end() && lease->second;
  locks_.drop(id);
  SqliteStatement remove;
  SMLA_TRY(db_.prepare("DELETE FROM leases WHERE id = ? AND pid = ? AND host = ?", &remove));
  return remove.bind(1, to_sql(id))
      .bind(2, static_cast<int64_t>(getpid()))
      .bind(3, locked ? locked_lease_host_name() : lease_host_name())
      .run();
}

Status LeaseTable::release_all() {
  // This store's leases only: another store of this process may hold others.
  while (!locks_.held().empty()) SMLA_TRY(release(locks_.held().begin()->first));
  return ok_status();
}

}  // namespace smla
