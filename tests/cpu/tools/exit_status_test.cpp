// Every command exits 0 on success, 1 when its work failed and 2 when it could not start what
// was asked (tools/commands.h), whichever part noticed: CLI11's parser gave its own codes (105,
// 106, 109), the commands 1 or 2. With --json, a command that fails before any result still
// prints a JSON object naming the error (`cache build --json` printed nothing).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/cli_process.h"

namespace smla::cli_test {
namespace {

// The "error" of a JSON object on stdout, or "" when stdout is not one.
std::string json_error(const CliResult& result) {
  const nlohmann::json out = result.json();
  return out.is_object() ? out.value("error", "") : "";
}

TEST(ExitStatus, UsageErrorsOfEveryKindAreTwo) {
  TempDir dir;
  const std::vector<std::vector<std::string>> cases = {
      {"bogus"},                                                        // unknown command
      {"cache", "ls", "--bogus"},                                       // unknown option
      {"cache", "build", "--preset", "dsv4-flash-tp8", "--jobs", "x"},  // a value CLI11 refuses
      {"cache", "export"},                                              // a required option missing
      {"info", "extra"},                                                // an argument left over
      {"check", "--preset", "llama"},  // a value the command refuses
      {"tune", "--list", "--preset", "dsv4-flash-tp8", "--arch", "sm_80"},
  };
  for (const auto& args : cases) {
    SCOPED_TRACE(args.front() + (args.size() > 1 ? " " + args[1] : ""));
    const CliResult result = run_cli(args, {{{"SMLA_CACHE", dir.file("c.sqlite")}}});
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_FALSE(result.err.empty());
  }
}

TEST(ExitStatus, HelpAndVersionAreZero) {
  for (const char* flag : {"--help", "--version"}) {
    SCOPED_TRACE(flag);
    const CliResult result = run_cli({flag});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_FALSE(result.out.empty());
  }
}

TEST(JsonOutput, InfoWithoutAGpu) {
  const CliResult result = run_cli({"info", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json info = result.json();
  ASSERT_TRUE(info.is_object()) << result.out;
  EXPECT_FALSE(info.at("version").get<std::string>().empty());
  if (info.at("gpu").is_null()) return;  // the CPU machines have none
  EXPECT_FALSE(info.at("gpu").at("arch").get<std::string>().empty()) << result.out;
}

TEST(JsonOutput, FailuresBeforeAnyResultAreAnErrorObject) {
  TempDir dir;
  {
    SCOPED_TRACE("cache build of an unknown preset");
    const CliResult result = run_cli({"cache", "build", "--json", "--preset", "llama", "--arch",
                                      "sm_90a", "--cache", dir.file("c.sqlite")});
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_NE(json_error(result).find("llama"), std::string::npos) << result.out;
  }
  {
    SCOPED_TRACE("check of an unknown preset");
    const CliResult result = run_cli({"check", "--json", "--preset", "llama"});
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_NE(json_error(result).find("llama"), std::string::npos) << result.out;
  }
  {
    SCOPED_TRACE("an option value CLI11 refuses");
    const CliResult result = run_cli(
        {"bench", "--json", "--preset", "dsv4-flash-tp8", "--rows", "1", "--pool-gb", "100"});
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_NE(json_error(result).find("--pool-gb"), std::string::npos) << result.out;
  }
  {
    SCOPED_TRACE("tune of a layer the deployment lacks");
    const CliResult result =
        run_cli({"tune", "--json", "--preset", "dsv4-flash-tp8", "--layer", "mla"},
                {{{"SMLA_CACHE", dir.file("c.sqlite")}}});
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_NE(json_error(result).find("mla"), std::string::npos) << result.out;
  }
  const nlohmann::json info = run_cli({"info", "--json"}).json();
  if (!info.is_object() || !info.value("gpu", nlohmann::json()).is_null()) return;
  // Without a GPU the work fails; it was not misused.
  for (const char* command : {"check", "bench"}) {
    SCOPED_TRACE(command);
    const CliResult result =
        run_cli({command, "--json", "--preset", "dsv4-flash-tp8", "--rows", "1"});
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_FALSE(json_error(result).empty()) << result.out;
  }
}

// List options take "a,b" and repeat ("--layer csa --layer swa"), and take one argument a use.
TEST(ListOptions, CommasAndRepeatsAdd) {
  const CliResult repeated =
      run_cli({"tune", "--list", "--preset", "dsv4-flash-tp8", "--layer", "csa", "--layer", "swa"});
  ASSERT_EQ(repeated.exit_code, 0) << repeated.err;
  for (const char* label : {"csa/qlen1", "swa/qlen1"}) {
    EXPECT_NE(repeated.out.find(label), std::string::npos) << label << "\n" << repeated.out;
  }
  EXPECT_EQ(repeated.out.find("hca/"), std::string::npos) << repeated.out;
  // The second item of "2,0" is read: q_len 0 is refused.
  const CliResult listed =
      run_cli({"tune", "--list", "--preset", "dsv4-flash-tp8", "--q-len", "2,0"});
  EXPECT_EQ(listed.exit_code, 2) << listed.out;
  EXPECT_NE(listed.err.find("qlen0"), std::string::npos) << listed.err;
  const CliResult spaced =
      run_cli({"tune", "--list", "--preset", "dsv4-flash-tp8", "--layer", "csa", "swa"});
  EXPECT_EQ(spaced.exit_code, 2) << spaced.out;  // "swa" is not a second value of --layer
}

}  // namespace
}  // namespace smla::cli_test
