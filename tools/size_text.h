// Byte counts for people: "532 B", "81.2 kB", "3.41 MB" (decimal units; JSON carries the bytes).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>

namespace smla::tools {

inline std::string size_text(int64_t bytes) {
  if (bytes < 1000) return fmt::format("{} B", bytes);
  if (bytes < 1000 * 1000) return fmt::format("{:.1f} kB", bytes / 1e3);
  if (bytes < 1000 * 1000 * 1000) return fmt::format("{:.2f} MB", bytes / 1e6);
  return fmt::format("{:.2f} GB", bytes / 1e9);
}

}  // namespace smla::tools
