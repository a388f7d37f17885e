// README.md and the CLI cannot drift apart: every `smla ...` line of the README's code blocks
// runs, in order, in a scratch directory with the README's deployment example saved as
// my-deployment.json, and exits 0 (lines marked `# GPU` exit 1 on a machine without one); and
// every command of the README's CLI table has a --help that lists each option the row names.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli_process.h"

namespace smla::cli_test {
namespace {

std::string readme_text() {
  std::ifstream file(std::string(SMLA_SOURCE_DIR) + "/README.md");
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::vector<std::string> words_of(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

struct ReadmeCommand {
  std::vector<std::string> args;  // without the leading "smla"
  bool needs_gpu = false;
  std::string line;
};

// The README's fenced blocks: the command lines of every block, and the text of the json one.
void parse_blocks(const std::string& readme, std::vector<ReadmeCommand>* commands,
                  std::string* deployment_json) {
  std::istringstream lines(readme);
  std::string line;
  std::string fence;  // the opening fence's info string while inside a block
  bool inside = false;
  while (std::getline(lines, line)) {
    if (line.rfind("```", 0) == 0) {
      inside = !inside;
      fence = line.substr(3);
      continue;
    }
    if (!inside) continue;
    if (fence == "json") *deployment_json += line + "\n";
    if (line.rfind("smla ", 0) != 0) continue;
    ReadmeCommand command;
    command.line = line;
    const size_t comment = line.find('#');
    command.needs_gpu =
        comment != std::string::npos && line.find("GPU", comment) != std::string::npos;
    command.args =
        words_of(line.substr(5, comment == std::string::npos ? std::string::npos : comment - 5));
    commands->push_back(command);
  }
}

TEST(Readme, EveryCommandLineRuns) {
  std::vector<ReadmeCommand> commands;
  std::string deployment_json;
  parse_blocks(readme_text(), &commands, &deployment_json);
  ASSERT_GE(commands.size(), 10u);
  ASSERT_FALSE(deployment_json.empty());
  TempDir dir;
  std::ofstream(dir.file("my-deployment.json")) << deployment_json;
  const CliOptions in_dir{{{"SMLA_CACHE", dir.file("cache.sqlite")}}, false, 0, dir.path()};
  const CliResult info = run_cli({"info"}, in_dir);
  const bool has_gpu = info.out.rfind("GPU", 0) == 0 || info.out.find("\nGPU") != std::string::npos;
  for (const ReadmeCommand& command : commands) {
    SCOPED_TRACE(command.line);
    const CliResult result = run_cli(command.args, in_dir);
    EXPECT_EQ(result.exit_code, command.needs_gpu && !has_gpu ? 1 : 0) << result.out << result.err;
  }
}

// The commands of the table's first column: "`smla cache ls [--json]`, `stats`" is `cache ls`
// with --json and `cache stats`; each with the options its backquoted text names.
TEST(Readme, TableCommandsAndOptionsExist) {
  const std::string readme = readme_text();
  std::istringstream lines(readme);
  std::string line;
  int rows = 0;
  const std::regex quoted("`([^`]+)`");
  const std::regex option("--[a-z][a-z0-9-]*");
  while (std::getline(lines, line)) {
    if (line.rfind("| `smla ", 0) != 0) continue;
    ++rows;
    const std::string first_cell = line.substr(1, line.find(" | ") - 1);
    std::vector<std::string> path;
    for (auto it = std::sregex_iterator(first_cell.begin(), first_cell.end(), quoted);
         it != std::sregex_iterator(); ++it) {
      const std::string text = (*it)[1];
      std::vector<std::string> words = words_of(text);
      if (words.empty()) continue;
      if (words[0] == "smla") {
        path.clear();
        for (size_t i = 1; i < words.size() && words[i][0] != '-' && words[i][0] != '['; ++i) {
          path.push_back(words[i]);
        }
      } else if (!path.empty()) {
        path.back() = words[0];  // a sibling subcommand: `stats` after `smla cache ls`
      }
      SCOPED_TRACE(text);
      std::vector<std::string> args = path;
      args.push_back("--help");
      const CliResult help = run_cli(args);
      ASSERT_EQ(help.exit_code, 0) << help.err;
      for (auto o = std::sregex_iterator(text.begin(), text.end(), option);
           o != std::sregex_iterator(); ++o) {
        EXPECT_NE(help.out.find(o->str()), std::string::npos) << o->str() << "\n" << help.out;
      }
    }
  }
  EXPECT_GE(rows, 8);
}

}  // namespace
}  // namespace smla::cli_test
