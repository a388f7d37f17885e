// The smla command line (DESIGN.md §6): info, selftest, cache build/ls/stats/verify/gc/path,
// check, bench. Plain text by default, JSON with --json.
#include <smla.h>

#include "tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"smla: JIT-compiled DeepSeek-V4 sparse attention"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(smla_version()));
  int exit_code = 0;
  smla::tools::add_info_commands(app, &exit_code);
  smla::tools::add_cache_commands(app, &exit_code);
  smla::tools::add_check_command(app, &exit_code);
  smla::tools::add_bench_command(app, &exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
