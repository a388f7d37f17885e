// A deployment file's sources may be windows and prefixes: kind and ratio are read into the
// problem, and an unknown kind is an error naming the file and the field.
#include <gtest/gtest.h>

#include <string>

#include "deployments/deployment.h"

namespace smla {
namespace {

TEST(DeploymentSourceKind, WindowAndPrefixAreRead) {
  Deployment deployment;
  const Status status = parse_deployment_text(
      R"({"heads": 16, "q_lens": [1], "layers": [{"name": "hca", "sources": [
            {"page_size": 256, "width": 128, "kind": "window"},
            {"page_size": 2, "width": 1024, "kind": "prefix", "ratio": 128}]}]})",
      "hca.json", &deployment);
  ASSERT_TRUE(status) << status.message();
  const auto problems = deployment.problems();
  ASSERT_EQ(problems.size(), 1u);
  const smla_problem& p = problems[0].second;
  EXPECT_EQ(p.sources[0].kind, SMLA_SOURCE_WINDOW);
  EXPECT_EQ(p.sources[0].ratio, 0);
  EXPECT_EQ(p.sources[1].kind, SMLA_SOURCE_PREFIX);
  EXPECT_EQ(p.sources[1].ratio, 128);
  EXPECT_EQ(problem_text(p), "h16 packed q=bf16 p256w128.window+p2w1024.prefix128 qlen1 sink");
}

TEST(DeploymentSourceKind, UnknownKindNamesTheField) {
  Deployment deployment;
  const Status status = parse_deployment_text(
      R"({"heads": 16, "layers": [{"name": "swa", "sources": [
            {"page_size": 256, "width": 128, "kind": "sliding"}]}]})",
      "swa.json", &deployment);
  EXPECT_EQ(status.code(), SMLA_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(),
            "swa.json: layers[0].sources[0].kind = \"sliding\": expected list, window or prefix");
}

}  // namespace
}  // namespace smla
