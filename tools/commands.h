// The subcommands of the smla CLI; each file tools/cmd_*.cpp adds one group to the app.
#pragma once

#include <CLI/CLI.hpp>

namespace smla::tools {

// Each returns through `exit_code` when its subcommand ran.
void add_info_commands(CLI::App& app, int* exit_code);
void add_cache_commands(CLI::App& app, int* exit_code);
void add_check_command(CLI::App& app, int* exit_code);
void add_bench_command(CLI::App& app, int* exit_code);
void add_tune_command(CLI::App& app, int* exit_code);

}  // namespace smla::tools
