// The environment variables that override a context's options (include/smla.h) and the CLI's
// logging. A value outside a variable's set is ignored with a warning naming it: a typo such as
// SMLA_JIT=off must neither pass silently nor switch compiling on.
#pragma once

#include <cstdlib>
#include <optional>

#include "support/log.h"

namespace smla {

// A switch: "0" is false, "1" true; unset (or any other value, with a warning) is nullopt.
inline std::optional<bool> env_switch(const char* name, const Logger& log) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  if (value[0] != '\0' && value[1] == '\0' && (value[0] == '0' || value[0] == '1')) {
    return value[0] == '1';
  }
  log.warn("ignoring {}={}: expected 0 or 1", name, value);
  return std::nullopt;
}

// SMLA_LOG=error|warn|info|debug sets `log`'s level.
inline void apply_log_environment(Logger* log) {
  const char* level = std::getenv("SMLA_LOG");
  if (level == nullptr) return;
  smla_log_level parsed;
  if (parse_log_level(level, &parsed)) {
    log->set_level(parsed);
  } else {
    log->warn("ignoring SMLA_LOG={}: expected error, warn, info or debug", level);
  }
}

}  // namespace smla
