// The subcommands of the smla CLI; each file tools/cmd_*.cpp adds one group to the app.
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "deployments/json_text.h"
#include "support/status.h"

namespace smla::tools {

// CLI::Range passes NaN (every comparison with it is false): a real option's values must be
// finite numbers first.
inline const CLI::Validator kFinite(
    [](const std::string& text) -> std::string {
      double value = 0.0;
      return CLI::detail::lexical_cast(text, value) && std::isfinite(value)
                 ? std::string()
                 : "Value " + text + " is not a finite number";
    },
    "FINITE");

// A comma-separated list option ("--rows 1,8,64"; repeating it adds: "--rows 1 --rows 8"). Each
// use takes exactly one argument and every item must parse and pass `item_check`: with CLI11's
// delimiter an empty item ("--arch ,") made the option take the next argument instead.
template <typename T>
CLI::Option* add_list_option(CLI::App& app, const std::string& name, std::vector<T>* values,
                             const std::string& description,
                             const CLI::Validator& item_check = CLI::Validator()) {
  const auto parse = [name, values, item_check](const std::vector<std::string>& args) {
    values->clear();
    for (const std::string& arg : args) {
      std::string item;
      for (std::istringstream items(arg + ","); std::getline(items, item, ',');) {
        if (item.empty()) throw CLI::ValidationError(name, "an empty item in \"" + arg + "\"");
        std::string checked = item;
        const std::string why = item_check(checked);
        if (!why.empty()) throw CLI::ValidationError(name, why);
        T value{};
        if (!CLI::detail::lexical_cast(item, value)) throw CLI::ConversionError(item, name);
        values->push_back(value);
      }
    }
  };
  return app.add_option_function<std::vector<std::string>>(name, parse, description)
      ->allow_extra_args(false);
}

// Every command's exit status (README): 0 success; kExitFailed when the work failed (a check, a
// compile, a damaged cache, the GPU); kExitUsage when it could not start what was asked: a usage
// error, a deployment or problem the API refuses, a cache file it cannot use.
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

// What the caller asked for is refused (SMLA_ERR_INVALID_ARGUMENT, or SMLA_ERR_UNSUPPORTED as
// the C API's validation says of some problems): kExitUsage, else kExitFailed.
inline int exit_status_of(const Status& status) {
  if (status) return 0;
  const bool refused =
      status.code() == SMLA_ERR_INVALID_ARGUMENT || status.code() == SMLA_ERR_UNSUPPORTED;
  return refused ? kExitUsage : kExitFailed;
}

// A command that failed before any result: "smla COMMAND: message" on stderr and, with --json,
// {"error": message} on stdout, so that stdout is JSON whenever --json was given. Returns
// `exit_status`.
inline int report_failure(const char* command, const std::string& message, bool json,
                          int exit_status) {
  fmt::print(stderr, "smla {}: {}\n", command, message);
  if (json) fmt::print("{}\n", json_text({{"error", message}}));
  return exit_status;
}

// The same after some of `results` (a JSON array, filled only with --json) may have come: with
// --json, stdout holds them, or the error object when none came.
inline int report_failure(const char* command, const std::string& message, bool json,
                          const nlohmann::json& results, int exit_status) {
  if (json && !results.empty()) fmt::print("{}\n", json_text(results));
  return report_failure(command, message, json && results.empty(), exit_status);
}

// Each returns through `exit_code` when its subcommand ran.
void add_info_commands(CLI::App& app, int* exit_code);
void add_cache_commands(CLI::App& app, int* exit_code);
void add_check_command(CLI::App& app, int* exit_code);
void add_bench_command(CLI::App& app, int* exit_code);
void add_tune_command(CLI::App& app, int* exit_code);
void add_plan_command(CLI::App& app, int* exit_code);

}  // namespace smla::tools
