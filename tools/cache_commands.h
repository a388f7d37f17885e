// The subcommands of `smla cache`, one file each group: build (tools/cmd_cache_build.cpp),
// ls/stats/path (cmd_cache_inspect.cpp), verify/gc (cmd_cache_maintain.cpp), export
// (cmd_cache_export.cpp). Each returns through `exit_code` when its subcommand ran.
#pragma once

#include <CLI/CLI.hpp>

#include "tools/commands.h"

namespace smla::tools {

void add_cache_build_command(CLI::App& cache, int* exit_code);
void add_cache_inspect_commands(CLI::App& cache, int* exit_code);
void add_cache_maintain_commands(CLI::App& cache, int* exit_code);
void add_cache_export_command(CLI::App& cache, int* exit_code);

}  // namespace smla::tools
