#include "cache/lease_locks.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <system_error>

namespace smla {

namespace {

// Byte `id` of the file; 62 bits keep every offset a valid, positive off_t.
struct flock byte_of(uint64_t id, short type) {
  struct flock range {};
  range.l_type = type;
  range.l_whence = SEEK_SET;
  range.l_start = static_cast<off_t>(id & ((uint64_t{1} << 62) - 1));
  range.l_len = 1;
  return range;
}

// Every LeaseLocks of the process, for the fork handler below. Never destroyed: a store kept
// in a static may outlive any other static.
std::mutex& registry_mutex() {
  static auto* mutex = new std::mutex();
  return *mutex;
}
std::set<LeaseLocks*>& registry() {
  static auto* all = new std::set<LeaseLocks*>();
  return *all;
}

// Opens the side file, never following a link or blocking on a FIFO another user put there:
// a regular file or nothing (-1).
int open_side_file(const std::string& path, int access_mode) {
  const int fd = open(path.c_str(), access_mode | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  struct stat info {};
  if (fd >= 0 && (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode))) {
    close(fd);
    return -1;
  }
  return fd;
}

// Creates the side file at `path` with the owner and permission bits of `cache_file` (as SQLite
// does for its -wal and -shm: whoever may write the cache may lock), under a random temporary
// name linked into place, so that no process ever opens it with other bits. Quiet on failure:
// the caller opens whatever is there.
void create_side_file(const std::string& path, const std::string& cache_file) {
  struct stat cache {};
  if (stat(cache_file.c_str(), &cache) != 0) return;
  const auto set_owner_and_mode = [&](int fd) {
    if (geteuid() == 0) (void)!fchown(fd, cache.st_uid, cache.st_gid);
    (void)!fchmod(fd, cache.st_mode & 0666);
    close(fd);
  };
  std::random_device random;
  const std::string temporary = fmt::format("{}.{:08x}{:08x}.tmp", path, random(),
                                            random());  // pids repeat across containers
  const int fd = open(temporary.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return;
  set_owner_and_mode(fd);
  const bool linked = link(temporary.c_str(), path.c_str()) == 0;
  const int link_error = errno;
  unlink(temporary.c_str());
  if (linked || link_error == EEXIST) return;  // EEXIST: another process was first
  // A file system without hard links: created in place, its bits set a moment later.
  const int in_place = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (in_place >= 0) set_owner_and_mode(in_place);
}

}  // namespace

// NOTE: a child forked without exec shares the side file's open file description, and so would
// keep the parent's locks alive after the parent died (and could drop them): it closes its copy.
// Only the descriptor: another thread may have been changing held_ at the fork.
void close_lease_locks_in_child() {
  for (LeaseLocks* locks : registry()) {
    if (locks->fd_ >= 0) close(locks->fd_);
    locks->fd_ = -1;
  }
  registry_mutex().unlock();
}

std::string lease_locks_path(const std::string& cache_file) {
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(cache_file, ec);
  return (ec ? cache_file : real.string()) + "-leases";
}

std::string kernel_boot_id() {
  std::ifstream file("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(file, id);
  return id;
}

LeaseLocks::LeaseLocks(const std::string& cache_file) {
  static std::once_flag fork_handlers;
  std::call_once(fork_handlers, [] {
    pthread_atfork([] { registry_mutex().lock(); }, [] { registry_mutex().unlock(); },
                   close_lease_locks_in_child);
  });
  const std::string path = lease_locks_path(cache_file);
  if (access(path.c_str(), F_OK) != 0) create_side_file(path, cache_file);
  // Opened under the registry's lock, so that a fork meanwhile finds the descriptor registered.
  std::lock_guard<std::mutex> lock(registry_mutex());
  fd_ = open_side_file(path, O_RDWR);
  writable_ = fd_ >= 0;
  if (fd_ < 0) fd_ = open_side_file(path, O_RDONLY);  // can still see others' locks
  registry().insert(this);
}

LeaseLocks::~LeaseLocks() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry().erase(this);
  if (fd_ >= 0) close(fd_);
}

bool LeaseLocks::take(uint64_t id) {
  struct flock range = byte_of(id, F_WRLCK);
  const bool locked = can_lock() && fcntl(fd_, F_OFD_SETLK, &range) == 0;
  held_[id] = locked;
  return locked;
}

void LeaseLocks::drop(uint64_t id) {
  const auto lease = held_.find(id);
  if (lease == held_.end()) return;
  if (lease->second) {
    struct flock range = byte_of(id, F_UNLCK);
    (void)fcntl(fd_, F_OFD_SETLK, &range);
  }
  held_.erase(lease);
}

void LeaseLocks::drop_all() {
  if (fd_ >= 0) {
    struct flock everything {};
    everything.l_type = F_UNLCK;
    everything.l_whence = SEEK_SET;  // l_start 0, l_len 0: to the end of any file
    (void)fcntl(fd_, F_OFD_SETLK, &everything);
  }
  held_.clear();
}

std::optional<bool> LeaseLocks::held_elsewhere(uint64_t id) const {
  struct flock range = byte_of(id, F_WRLCK);
  if (fd_ < 0 || fcntl(fd_, F_OFD_GETLK, &range) != 0) return std::nullopt;
  return range.l_type != F_UNLCK;
}

}  // namespace smla
