// `smla cache ...`: placeholder group, filled by the cache commands change.
#include "tools/commands.h"

namespace smla::tools {

void add_cache_commands(CLI::App& app, int* exit_code) { (void)app; (void)exit_code; }

}  // namespace smla::tools
