// A deployment file's unknown kv_layout or q_dtype is reported like every other bad field of the
// file: the message opens with the file and names the field and its value, so that an operator
// with several files knows which one to fix.
#include <gtest/gtest.h>

#include <string>

#include "deployments/deployment.h"

namespace smla {
namespace {

std::string rejection(const std::string& text) {
  Deployment deployment;
  const Status status = parse_deployment_text(text, "my.json", &deployment);
  EXPECT_EQ(status.code(), SMLA_ERR_INVALID_ARGUMENT);
  return status.message();
}

constexpr const char* kLayers =
    R"("layers": [{"name": "csa", "sources": [{"page_size": 64, "width": 512}]}])";

TEST(DeploymentFieldMessage, UnknownLayoutNamesTheFileAndField) {
  EXPECT_EQ(rejection(std::string(R"({"heads": 16, "kv_layout": "fp8_unifrm", )") + kLayers + "}"),
            "my.json: kv_layout = \"fp8_unifrm\": expected fp8_packed, fp8_uniform or bf16");
}

TEST(DeploymentFieldMessage, UnknownDtypeNamesTheFileAndField) {
  EXPECT_EQ(rejection(std::string(R"({"heads": 16, "q_dtype": "e4m3", )") + kLayers + "}"),
            "my.json: q_dtype = \"e4m3\": expected bf16 or fp8_e4m3");
}

}  // namespace
}  // namespace smla
