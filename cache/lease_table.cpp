#include "cache/lease_table.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

namespace smla {

namespace {

// When process `pid` started, in unix seconds, from /proc (Linux); nullopt if unknown.
std::optional<int64_t> process_start_time(int64_t pid) {
  std::ifstream stat_file(fmt::format("/proc/{}/stat", pid));
  std::string stat_line;
  if (!std::getline(stat_file, stat_line)) return std::nullopt;
  // The command name (field 2) is parenthesized and may hold spaces: fields count from the last
  // ')'. What follows it starts at field 3; the start time is field 22, in clock ticks since boot.
  size_t name_end = stat_line.rfind(')');
  if (name_end == std::string::npos) return std::nullopt;
  std::istringstream fields(stat_line.substr(name_end + 1));
  std::string field;
  for (int index = 3; index <= 22; ++index) {
    if (!(fields >> field)) return std::nullopt;
  }
  long long ticks_since_boot = std::atoll(field.c_str());

  std::ifstream system_stat("/proc/stat");
  std::string name;
  long long boot_time = -1;
  while (system_stat >> name) {
    if (name == "btime") {
      system_stat >> boot_time;
      break;
    }
    system_stat.ignore(1 << 20, '\n');
  }
  long ticks_per_second = sysconf(_SC_CLK_TCK);
  if (boot_time < 0 || ticks_per_second <= 0) return std::nullopt;
  return boot_time + ticks_since_boot / ticks_per_second;
}

}  // namespace

std::string lease_host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) std::snprintf(name, sizeof(name), "unknown");
  // NOTE: containers of one pod share a host name but not their pids; the pid namespace (its
  // /proc link, "pid:[inode]") keeps one container from judging another's pids.
  char pid_namespace[64] = {};
  const ssize_t length = readlink("/proc/self/ns/pid", pid_namespace, sizeof(pid_namespace) - 1);
  if (length <= 0) return name;
  return fmt::format("{} {}", name, std::string(pid_namespace, static_cast<size_t>(length)));
}

std::string LeaseTable::stale_reason(const LeaseHolder& holder, int64_t now) const {
  if (now - holder.started > timeout_s_) {
    return fmt::format("it is older than the lease timeout ({} s)", timeout_s_);
  }
  // Pids mean something only on the host and in the pid namespace that wrote them.
  if (holder.host != lease_host_name()) return "";
  if (holder.pid <= 0) return "its pid is invalid";
  if (kill(static_cast<pid_t>(holder.pid), 0) != 0 && errno == ESRCH) {
    return "its process no longer exists";
  }
  // Two seconds of slack: both clocks round to seconds and /proc's boot time can drift by one.
  std::optional<int64_t> holder_start = process_start_time(holder.pid);
  if (holder_start && *holder_start > holder.started + 2) {
    return "its pid now belongs to a process started after the lease";
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
    *stale_reason_text = stale_reason(*holder, now);
    if (stale_reason_text->empty()) {
      *state = LeaseState::kHeld;
      return Status::ok();
    }
  }
  SqliteStatement take;
  SMLA_TRY(db_.prepare("INSERT OR REPLACE INTO leases (id, pid, host, started) VALUES (?, ?, ?, ?)",
                       &take));
  SMLA_TRY(take.bind(1, to_sql(id))
               .bind(2, static_cast<int64_t>(getpid()))
               .bind(3, lease_host_name())
               .bind(4, now)
               .run());
  *state = has_row ? LeaseState::kTakenOver : LeaseState::kTaken;
  return Status::ok();
}

Status LeaseTable::release(uint64_t id) {
  SqliteStatement remove;
  SMLA_TRY(db_.prepare("DELETE FROM leases WHERE id = ? AND pid = ? AND host = ?", &remove));
  return remove.bind(1, to_sql(id))
      .bind(2, static_cast<int64_t>(getpid()))
      .bind(3, lease_host_name())
      .run();
}

Status LeaseTable::release_all() {
  SqliteStatement remove;
  SMLA_TRY(db_.prepare("DELETE FROM leases WHERE pid = ? AND host = ?", &remove));
  return remove.bind(1, static_cast<int64_t>(getpid())).bind(2, lease_host_name()).run();
}

}  // namespace smla
