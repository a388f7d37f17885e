// With compiling forbidden, a kernel missing from the cache is SMLA_ERR_NOT_READY whose message
// is the remedy itself: its `smla cache build` command line, run with the deployment JSON the
// message spells out, makes the same prepare succeed.
#include <gtest/gtest.h>
#include <smla.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli_process.h"

namespace smla::cli_test {
namespace {

// The text of `message` between `open` and `close` ("" if absent).
std::string between(const std::string& message, const std::string& open, const std::string& close) {
  const size_t start = message.find(open);
  if (start == std::string::npos) return "";
  const size_t end = message.find(close, start + open.size());
  if (end == std::string::npos) return "";
  return message.substr(start + open.size(), end - start - open.size());
}

smla_status prepare_forbidden(const std::string& db, const smla_problem& problem,
                              std::string* message) {
  smla_options options;
  smla_options_init(&options);
  options.cache_path = db.c_str();
  options.jit = SMLA_JIT_FORBID;
  options.arch = "sm_90a";
  options.log_level = SMLA_LOG_ERROR;
  smla_context* context = nullptr;
  if (smla_context_create(&options, &context) != SMLA_OK) return SMLA_ERR_INTERNAL;
  size_t workspace = 0;
  const smla_status status = smla_prepare(context, &problem, 16, &workspace);
  *message = smla_last_error();
  smla_context_destroy(context);
  return status;
}

// Runs the remedy of `problem`'s NOT_READY and prepares it again.
void expect_remedy_prepares(const smla_problem& problem) {
  TempDir dir;
  const std::string db = dir.file("cache.sqlite");
  std::string message;
  ASSERT_EQ(prepare_forbidden(db, problem, &message), SMLA_ERR_NOT_READY) << message;
  const std::string command = between(message, "`smla ", "`");
  const std::string deployment = between(message, "this problem: ", " (or a preset");
  ASSERT_FALSE(command.empty()) << message;
  ASSERT_FALSE(deployment.empty()) << message;
  const std::string file = dir.file("deployment.json");
  std::ofstream(file) << deployment;
  std::vector<std::string> args;
  std::istringstream words(command);
  for (std::string word; words >> word;) args.push_back(word == "DEPLOYMENT.json" ? file : word);
  const CliResult build = run_cli(args);
  ASSERT_EQ(build.exit_code, 0) << command << "\n" << build.err;

  EXPECT_EQ(prepare_forbidden(db, problem, &message), SMLA_OK) << message;
}

smla_problem window_problem() {
  smla_problem problem{};
  problem.num_heads = 8;
  problem.q_dtype = SMLA_BF16;
  problem.kv_layout = SMLA_KV_FP8_PACKED;
  problem.q_len = 1;
  problem.num_sources = 1;
  problem.sources[0] = smla_source_desc{SMLA_SOURCE_LIST, 64, 128, 0};
  problem.has_sink = 1;
  return problem;
}

TEST(NotReady, TheMessageIsTheBuildCommand) { expect_remedy_prepares(window_problem()); }

// The deployment it spells out keeps window and prefix sources (their kernels differ).
TEST(NotReady, TheMessageKeepsStructuredSources) {
  smla_problem problem = window_problem();
  problem.sources[0].kind = SMLA_SOURCE_WINDOW;
  problem.num_sources = 2;
  problem.sources[1] = smla_source_desc{SMLA_SOURCE_PREFIX, 2, 64, 128};
  expect_remedy_prepares(problem);
}

}  // namespace
}  // namespace smla::cli_test
