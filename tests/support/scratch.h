// Scratch space and privileges for tests that touch the file system: a temporary directory
// removed at scope exit, reading a whole file, and dropping root in a forked child so that file
// permissions hold (the tests run as root, which ignores them).
#pragma once

#include <string>

namespace smla::test {

// A fresh directory (mode 0777, so an unprivileged child can use it), removed with its contents
// at scope exit, also when a test made parts of it read-only.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string read_file_bytes(const std::string& path);

// In a forked child: when running as root, become uid/gid 65534 (nobody). False on failure.
bool become_nobody_if_root();

}  // namespace smla::test
