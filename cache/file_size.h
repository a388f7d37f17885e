// The size of a file beside the cache (the database, its -wal, its -journal), 0 when it does not
// exist or cannot be read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>

namespace smla {

inline int64_t file_size_or_zero(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<int64_t>(size);
}

}  // namespace smla
