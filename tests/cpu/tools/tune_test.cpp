// `smla tune`: `--list` prints each problem's candidates (one per tuning id: the q_len variants
// of a layer share rows) without a GPU; what would lose the rows (a memory-only cache), an
// environment a context refuses (a SMLA_TILE that is no tile) and bad options are refused with
// a message naming them; without a GPU it fails cleanly.
#include <gtest/gtest.h>

#include <filesystem>

#include "autotune/tuning.h"
#include "deployments/deployment.h"
#include "harness/device_session.h"
#include "support/cli_process.h"

namespace smla::cli_test {
namespace {

std::vector<std::string> candidate_texts(const char* arch, const smla_problem& problem,
                                         bool batch_variant) {
  std::vector<std::string> texts;
  for (const TileConfig& t : tuning_candidates(*find_arch(arch), problem, batch_variant)) {
    texts.push_back(t.text());
  }
  return texts;
}

TEST(Tune, ListsEachLayersCandidatesOnce) {
  Deployment pro;
  ASSERT_TRUE(preset_deployment("dsv4-pro-tp8", 131072, &pro));
  ASSERT_EQ(pro.q_lens.size(), 2u);
  for (const char* arch : {"sm_90a", "sm_100a", "sm_121a"}) {
    for (const bool variant : {false, true}) {
      SCOPED_TRACE(std::string(arch) + (variant ? " batch-variant" : " batch-invariant"));
      std::vector<std::string> args = {"tune",         "--list", "--json", "--preset",
                                       "dsv4-pro-tp8", "--arch", arch};
      if (variant) args.push_back("--batch-variant");
      const CliResult result = run_cli(args);
      ASSERT_EQ(result.exit_code, 0) << result.err;
      const nlohmann::json listed = result.json();
      ASSERT_TRUE(listed.is_array()) << result.out;
      ASSERT_EQ(listed.size(), pro.layers.size());  // not once per q_len
      for (size_t i = 0; i < pro.layers.size(); ++i) {
        SCOPED_TRACE(pro.layers[i].name);
        EXPECT_EQ(listed[i]["candidates"].get<std::vector<std::string>>(),
                  candidate_texts(arch, pro.layers[i].problem, variant));
      }
    }
  }
}

TEST(Tune, RefusesWhatWouldLoseOrSkewItsRows) {
  TempDir dir;
  const std::vector<std::string> tune = {"tune", "--preset", "dsv4-flash-tp8", "--layer", "csa"};
  struct Case {
    std::vector<std::string> extra;
    std::vector<std::pair<std::string, std::string>> env;
    std::string names;
  };
  const std::string db = dir.file("tuned.sqlite");
  const Case cases[] = {
      {{}, {{"SMLA_CACHE", ""}}, "memory-only"},
      {{}, {{"SMLA_CACHE", db}, {"SMLA_TILE", "fast"}}, "SMLA_TILE"},
      {{"--list", "--arch", "sm_80"}, {}, "--arch sm_80"},
      {{"--margin", "0.9"}, {{"SMLA_CACHE", db}}, "--margin"},
      {{"--max-rows", "0"}, {{"SMLA_CACHE", db}}, "--max-rows"},
      {{"--repeats", "0"}, {{"SMLA_CACHE", db}}, "--repeats"},
      {{"--layer", "mla"}, {{"SMLA_CACHE", db}}, "--layer mla (it has"},
      {{"--arch", "sm_90a"}, {{"SMLA_CACHE", db}}, "--arch requires --list"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = tune;
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    SCOPED_TRACE(c.names);
    CliOptions options;
    options.env = c.env;
    const CliResult result = run_cli(args, options);
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;  // none got to tune
    EXPECT_NE(result.err.find(c.names), std::string::npos) << result.err;
  }
}

TEST(Tune, WithoutAGpuFailsCleanly) {
  std::unique_ptr<DeviceSession> session;
  if (DeviceSession::open(0, &session)) GTEST_SKIP() << "a GPU is present: this would tune";
  TempDir dir;
  CliOptions options;
  options.env = {{"SMLA_CACHE", dir.file("tuned.sqlite")}};
  const CliResult result =
      run_cli({"tune", "--preset", "dsv4-flash-tp8", "--layer", "csa"}, options);
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_NE(result.err.find("smla tune: "), std::string::npos) << result.err;
  EXPECT_EQ(result.out.find("tuning rows written"), std::string::npos) << result.out;
  EXPECT_FALSE(std::filesystem::exists(dir.file("tuned.sqlite")));  // nothing to write it for
}

}  // namespace
}  // namespace smla::cli_test
