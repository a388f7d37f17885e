// An environment variable set for one scope. Tests that change the environment go through it,
// and so does `smla tune`, which picks what each context runs with the variables contexts read.
#pragma once

#include <stdlib.h>

#include <optional>
#include <string>

namespace smla {

// Sets `name` to `value` (nullptr: unsets it) for the scope, then restores the old value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) saved_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (saved_) {
      setenv(name_.c_str(), saved_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> saved_;
};

}  // namespace smla
