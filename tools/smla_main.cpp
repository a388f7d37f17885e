// The smla command line: cache build/ls/stats/verify/gc/path, check, bench (DESIGN.md §6).
#include <smla.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

int main(int argc, char** argv) {
  CLI::App app{"smla: JIT-compiled DeepSeek-V4 sparse attention"};
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", std::string(smla_version()));
  CLI11_PARSE(app, argc, argv);
  fmt::print("smla {}\n", smla_version());
  return 0;
}
