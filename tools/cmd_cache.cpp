// `smla cache ...`: the kernel cache from the command line (docs/design.md).
#include "tools/cache_commands.h"
#include "tools/commands.h"

namespace smla::tools {

void add_cache_commands(CLI::App& app, int* exit_code) {
  CLI::App* cache = app.add_subcommand("cache", "build, inspect and maintain the kernel cache");
  cache->require_subcommand(1);
  add_cache_build_command(*cache, exit_code);
  add_cache_inspect_commands(*cache, exit_code);
  add_cache_maintain_commands(*cache, exit_code);
  add_cache_export_command(*cache, exit_code);
}

}  // namespace smla::tools
