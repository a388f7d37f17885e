// Errors are values: a Status carries an smla_status code and a message naming what failed.
// Every layer below the C boundary returns these; nothing throws across it.
#pragma once

#include <fmt/format.h>
#include <smla.h>

#include <string>
#include <utility>

namespace smla {

class Status {
 public:
  Status() = default;
  Status(smla_status code, std::string message) : code_(code), message_(std::move(message)) {}

  bool is_ok() const { return code_ == SMLA_OK; }
  explicit operator bool() const { return is_ok(); }
  smla_status code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  smla_status code_ = SMLA_OK;
  std::string message_;
};

// Success. A free function, not a static member: `status.ok()` would compile and ignore
// `status`.
inline Status ok_status() { return {}; }

template <typename... Args>
Status error(smla_status code, fmt::format_string<Args...> format, Args&&... args) {
  return Status(code, fmt::format(format, std::forward<Args>(args)...));
}

// Returns from the enclosing function if `expr` is not ok.
#define SMLA_TRY(expr)                                    \
  do {                                                    \
    ::smla::Status smla_try_status = (expr);              \
    if (!smla_try_status.is_ok()) return smla_try_status; \
  } while (0)

}  // namespace smla
