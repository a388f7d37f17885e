// A small leveled logger that writes one line per message to stderr. Each context owns one and
// hands it to the layers it drives, so two contexts with different levels do not interfere.
#pragma once

#include <fmt/format.h>
#include <smla.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>

namespace smla {

class Logger {
 public:
  explicit Logger(smla_log_level level = SMLA_LOG_WARN) : level_(level) {}

  void set_level(smla_log_level level) { level_.store(level); }
  smla_log_level level() const { return level_.load(); }
  bool enabled(smla_log_level level) const { return level <= level_.load(); }

  template <typename... Args>
  void log(smla_log_level level, fmt::format_string<Args...> format, Args&&... args) const {
    if (!enabled(level)) return;
    write(level, fmt::format(format, std::forward<Args>(args)...));
  }
  template <typename... Args>
  void error(fmt::format_string<Args...> f, Args&&... a) const {
    log(SMLA_LOG_ERROR, f, std::forward<Args>(a)...);
  }
  template <typename... Args>
  void warn(fmt::format_string<Args...> f, Args&&... a) const {
    log(SMLA_LOG_WARN, f, std::forward<Args>(a)...);
  }
  template <typename... Args>
  void info(fmt::format_string<Args...> f, Args&&... a) const {
    log(SMLA_LOG_INFO, f, std::forward<Args>(a)...);
  }
  template <typename... Args>
  void debug(fmt::format_string<Args...> f, Args&&... a) const {
    log(SMLA_LOG_DEBUG, f, std::forward<Args>(a)...);
  }

 private:
  void write(smla_log_level level, const std::string& line) const {
    static const char* const kNames[] = {"error", "warn", "info", "debug"};
    std::lock_guard<std::mutex> lock(mutex_);
    std::fprintf(stderr, "smla %s: %s\n", kNames[level], line.c_str());
  }

  std::atomic<smla_log_level> level_;
  mutable std::mutex mutex_;
};

// Parses "error|warn|info|debug"; returns false for anything else.
inline bool parse_log_level(const std::string& text, smla_log_level* level) {
  static const char* const kNames[] = {"error", "warn", "info", "debug"};
  for (int i = 0; i < 4; ++i) {
    if (text == kNames[i]) {
      *level = static_cast<smla_log_level>(i);
      return true;
    }
  }
  return false;
}

}  // namespace smla
