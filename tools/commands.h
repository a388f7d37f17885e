// The subcommands of the smla CLI; each file tools/cmd_*.cpp adds one group to the app.
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <string>

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

// Each returns through `exit_code` when its subcommand ran.
void add_info_commands(CLI::App& app, int* exit_code);
void add_cache_commands(CLI::App& app, int* exit_code);
void add_check_command(CLI::App& app, int* exit_code);
void add_bench_command(CLI::App& app, int* exit_code);
void add_tune_command(CLI::App& app, int* exit_code);

}  // namespace smla::tools
