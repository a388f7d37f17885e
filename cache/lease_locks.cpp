#include "cache/lease_locks.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

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

}  // namespace

std::string lease_locks_path(const std::string& cache_path) { return cache_path + "-leases"; }

std::string kernel_boot_id() {
  std::ifstream file("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(file, id);
  return id;
}

std::unique_ptr<LeaseLocks> LeaseLocks::open(const std::string& cache_path) {
  const std::string path = lease_locks_path(cache_path);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  const bool created = fd >= 0;
  if (!created && errno == EEXIST) fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat cache_file {};
  if (created && stat(cache_path.c_str(), &cache_file) == 0) {
    // NOTE: as SQLite does for its -wal and -shm files: whoever may write the cache may lock
    // here, even when root created the side file.
    if (geteuid() == 0) (void)fchown(fd, cache_file.st_uid, cache_file.st_gid);
    (void)fchmod(fd, cache_file.st_mode & 0666);
  }
  return std::unique_ptr<LeaseLocks>(new LeaseLocks(fd));
}

LeaseLocks::~LeaseLocks() { close(fd_); }

bool LeaseLocks::lock(uint64_t id) {
  struct flock range = byte_of(id, F_WRLCK);
  if (fcntl(fd_, F_OFD_SETLK, &range) != 0) return false;
  held_.insert(id);
  return true;
}

void LeaseLocks::unlock(uint64_t id) {
  if (held_.erase(id) == 0) return;
  struct flock range = byte_of(id, F_UNLCK);
  (void)fcntl(fd_, F_OFD_SETLK, &range);
}

void LeaseLocks::unlock_all() {
  struct flock everything {};
  everything.l_type = F_UNLCK;
  everything.l_whence = SEEK_SET;  // l_start 0, l_len 0: to the end of any file
  (void)fcntl(fd_, F_OFD_SETLK, &everything);
  held_.clear();
}

std::optional<bool> LeaseLocks::held_elsewhere(uint64_t id) const {
  struct flock range = byte_of(id, F_WRLCK);
  if (fcntl(fd_, F_OFD_GETLK, &range) != 0) return std::nullopt;
  return range.l_type != F_UNLCK;
}

}  // namespace smla
