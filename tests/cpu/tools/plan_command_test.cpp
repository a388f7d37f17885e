// `smla plan` prints, without a GPU, the plans smla_prepare builds: per layer (its q_len variants
// share one plan), arch and mode, the kernels with their roles and key texts, the workspace for
// --max-rows, and row ranges from 1 that run each kernel; their kernels together are what
// `smla cache build` compiles. Bad options are usage errors naming them.
#include <gtest/gtest.h>

#include <set>

#include "deployments/deployment.h"
#include "plan/decode_plan.h"
#include "support/cli_process.h"

namespace smla::cli_test {
namespace {

smla_problem pro_tp8_csa() {
  Deployment pro;
  EXPECT_TRUE(preset_deployment("dsv4-pro-tp8", 131072, &pro));
  for (const LayerType& layer : pro.layers) {
    if (layer.name == "csa") return layer.problem;
  }
  ADD_FAILURE() << "no csa layer";
  return {};
}

TEST(PlanCommand, JsonListsThePlansKernelsAndRanges) {
  const CliResult result =
      run_cli({"plan", "--preset", "dsv4-pro-tp8", "--layer", "csa", "--arch", "sm_90a", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json plans = result.json();
  ASSERT_TRUE(plans.is_array()) << result.out;
  ASSERT_EQ(plans.size(), 2u);  // both modes; q_len 1 and 2 share one plan
  const smla_problem problem = pro_tp8_csa();
  std::set<std::string> listed;
  for (size_t m = 0; m < plans.size(); ++m) {
    const nlohmann::json& p = plans[m];
    const bool variant = m == 1;
    SCOPED_TRACE(p.dump());
    EXPECT_EQ(p.at("layer"), "csa");
    EXPECT_EQ(p.at("arch"), "sm_90a");
    EXPECT_EQ(p.at("mode"), variant ? "batch-variant" : "batch-invariant");
    PlanSettings settings;
    settings.batch_variant = variant;
    std::unique_ptr<DecodePlan> plan;
    ASSERT_TRUE(DecodePlan::build(*find_arch("sm_90a"), problem, settings, {}, &plan));
    EXPECT_EQ(p.at("workspace_bytes").get<size_t>(), plan->workspace_bytes(1024));
    const nlohmann::json& kernels = p.at("kernels");
    ASSERT_EQ(kernels.size(), plan->kernels().size());
    for (size_t i = 0; i < kernels.size(); ++i) {
      const PlannedKernel& k = plan->kernels()[i];
      EXPECT_EQ(kernels[i].at("role"), kernel_role_name(k.role));
      EXPECT_EQ(kernels[i].at("decode"), k.decode.text());
      listed.insert(k.decode.text());
      if (k.combine) {
        EXPECT_EQ(kernels[i].at("combine"), k.combine->text());
        listed.insert(k.combine->text());
      } else {
        EXPECT_TRUE(kernels[i].at("combine").is_null());
      }
    }
    int next = 1;
    const nlohmann::json& ranges = p.at("ranges");
    ASSERT_FALSE(ranges.empty());
    for (const nlohmann::json& r : ranges) {
      EXPECT_EQ(r.at("first_rows").get<int>(), next);
      const int kernel = r.at("kernel").get<int>();
      ASSERT_LT(kernel, static_cast<int>(kernels.size()));
      const int rows = r.at("first_rows").get<int>();
      EXPECT_EQ(plan->call(rows, plan->workspace_bytes(rows)).kernel, kernel);
      if (r.at("last_rows").is_null()) break;
      next = r.at("last_rows").get<int>() + 1;
    }
    EXPECT_TRUE(ranges.back().at("last_rows").is_null()) << "whole rows past the splits";
  }
  std::set<std::string> prewarmed;
  for (const KernelKey& key : prewarm_kernels(*find_arch("sm_90a"), problem)) {
    prewarmed.insert(key.text());
  }
  EXPECT_EQ(listed, prewarmed);
}

TEST(PlanCommand, TextNamesEachKernelAndRange) {
  const CliResult result = run_cli({"plan", "--preset", "dsv4-flash-tp1", "--layer", "hca",
                                    "--arch", "sm_120a", "--mode", "variant", "--max-rows", "64"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("hca on sm_120a, batch-variant:"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("batch-invariant"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("workspace for 64 rows:"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("kernel 0 (default): family=decode;arch=sm_120a;heads=64;"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("  rows 1"), std::string::npos) << result.out;
}

TEST(PlanCommand, BadOptionsAreUsageErrors) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"plan", "--preset", "dsv4-pro-tp8", "--arch", "sm_80"},
        std::vector<std::string>{"plan", "--preset", "dsv4-pro-tp9"},
        std::vector<std::string>{"plan", "--preset", "dsv4-pro-tp8", "--layer", "mla"},
        std::vector<std::string>{"plan", "--preset", "dsv4-pro-tp8", "--mode", "fast"},
        std::vector<std::string>{"plan", "--preset", "dsv4-pro-tp8", "--max-rows", "0"}}) {
    SCOPED_TRACE(args.back());
    const CliResult result = run_cli(args);
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_FALSE(result.err.empty());
  }
}

}  // namespace
}  // namespace smla::cli_test
