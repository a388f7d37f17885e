// A deployment file whose arrays and objects nest deeper than any valid file is refused with a
// message, not parsed: the message about a bad field prints its value, which recursed once per
// level and overflowed the stack at 10^5 levels (the CLI crashed on a 400 KB file).
#include <gtest/gtest.h>

#include <string>

#include "deployments/deployment.h"

namespace smla {
namespace {

std::string nested_arrays(int levels) {
  return std::string(levels, '[') + std::string(levels, ']');
}

TEST(DeploymentDeepNesting, DeepValueIsRefused) {
  Deployment deployment;
  const Status status = parse_deployment_text(
      R"({"heads": )" + nested_arrays(200000) + R"(, "layers": []})", "deep.json", &deployment);
  EXPECT_EQ(status.code(), SMLA_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message().rfind("deep.json: ", 0), 0u) << status.message();
  EXPECT_NE(status.message().find("nest deeper than"), std::string::npos) << status.message();
}

TEST(DeploymentDeepNesting, ShallowBadValueIsStillNamed) {
  Deployment deployment;
  const Status status = parse_deployment_text(
      R"({"heads": )" + nested_arrays(8) + R"(, "layers": []})", "shallow.json", &deployment);
  EXPECT_EQ(status.code(), SMLA_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "shallow.json: heads = [[[[[[[[]]]]]]]]: must be a 32-bit integer");
}

TEST(DeploymentDeepNesting, ValidFileParses) {
  Deployment deployment;
  const Status status = parse_deployment_text(
      R"({"heads": 8, "layers": [{"name": "swa", "sources": [{"page_size": 256, "width": 128}]}]})",
      "ok.json", &deployment);
  ASSERT_TRUE(status.is_ok()) << status.message();
  ASSERT_EQ(deployment.layers.size(), 1u);
  EXPECT_EQ(deployment.layers[0].problem.sources[0].width, 128);
}

}  // namespace
}  // namespace smla
