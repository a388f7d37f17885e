#include "support/scratch.h"

#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace smla::test {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "smla-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
  chmod(pattern.c_str(), 0777);
  path_ = pattern;
}

TempDir::~TempDir() {
  // Restore write permission first: tests make directories read-only.
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(path_, ec);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec)) chmod(it->path().c_str(), 0777);
  }
  std::filesystem::remove_all(path_, ec);
}

std::string read_file_bytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

bool become_nobody_if_root() {
  constexpr uid_t kNobody = 65534;
  if (geteuid() != 0) return true;
  return setgroups(0, nullptr) == 0 && setgid(kNobody) == 0 && setuid(kNobody) == 0;
}

}  // namespace smla::test
