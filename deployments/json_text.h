// JSON text for the CLI's --json output and its messages.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace smla {

// NOTE: paths and names are bytes on Linux, and dump() throws on a string that is not UTF-8:
// such bytes print as U+FFFD instead.
inline std::string json_text(const nlohmann::json& value, int indent = 1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace smla
