// The smla command line: info, selftest, cache build/ls/stats/verify/gc/path, plan, check,
// bench, tune. Plain text by default, JSON with --json.
#include <fmt/format.h>
#include <smla.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "tools/commands.h"

namespace {

int run_command(int argc, char** argv) {
  CLI::App app{"smla: JIT-compiled DeepSeek-V4 sparse attention"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(smla_version()));
  int exit_code = 0;
  smla::tools::add_info_commands(app, &exit_code);
  smla::tools::add_cache_commands(app, &exit_code);
  smla::tools::add_check_command(app, &exit_code);
  smla::tools::add_bench_command(app, &exit_code);
  smla::tools::add_plan_command(app, &exit_code);
  smla::tools::add_tune_command(app, &exit_code);
  try {
    app.parse(argc, argv);  // runs the command too
  } catch (const CLI::ParseError& e) {
    // NOTE: a mistyped command leaves its word unparsed, and CLI11 reports only that a
    // subcommand is required; the word is what the user needs to see.
    const std::vector<std::string> rest = app.remaining(true);
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && !rest.empty()) {
      fmt::print(stderr, "smla: unknown command \"{}\"\nRun with --help for the commands.\n",
                 rest.front());
      return smla::tools::kExitUsage;
    }
    // --help and --version arrive here too, with CLI11's success code.
    if (app.exit(e) == 0) return 0;
    // With --json, stdout is JSON for a refused option too (app.exit wrote the message to stderr).
    if (std::find(argv + 1, argv + argc, std::string("--json")) != argv + argc) {
      fmt::print("{}\n", smla::json_text({{"error", e.what()}}));
    }
    return smla::tools::kExitUsage;
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  // A command's own failures are statuses; this is what escaped one (out of memory, a library's
  // exception): a message and exit 1, not std::terminate's abort.
  try {
    return run_command(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "smla: internal error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "smla: internal error\n");
  }
  return smla::tools::kExitFailed;
}
