// The toolchain fingerprint names the NVRTC version and hashes of the embedded templates and
// compile options; it is computed once and identical on every call, so key ids are stable
// within a process and across processes with the same toolchain.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <thread>

#include "codegen/embedded_templates.h"
#include "codegen/nvrtc_compiler.h"

namespace smla {
namespace {

TEST(ToolchainFingerprint, NamesNvrtcAndIsStable) {
  const std::string version = nvrtc_version();
  EXPECT_TRUE(std::regex_match(version, std::regex("[0-9]+\\.[0-9]+"))) << version;

  const std::string& fingerprint = toolchain_fingerprint();
  ASSERT_FALSE(fingerprint.empty());
  EXPECT_TRUE(std::regex_match(
      fingerprint, std::regex("nvrtc=" + std::regex_replace(version, std::regex("\\."), "\\.") +
                              ";templates=[0-9a-f]{16};codegen=[0-9]+;options=[0-9a-f]{16}")))
      << fingerprint;

  EXPECT_EQ(&toolchain_fingerprint(), &fingerprint);
  std::string from_other_thread;
  std::thread([&] { from_other_thread = toolchain_fingerprint(); }).join();
  EXPECT_EQ(from_other_thread, fingerprint);
}

TEST(ToolchainFingerprint, CoversEveryTemplateAndTheOptions) {
  // The fingerprint hashes what compile_to_cubin passes: every embedded template and the options.
  bool has_decode = false, has_combine = false;
  for (const EmbeddedTemplate& t : embedded_templates()) {
    has_decode = has_decode || std::string(t.name) == "decode_kernel.cuh";
    has_combine = has_combine || std::string(t.name) == "combine_kernel.cuh";
    EXPECT_GT(std::char_traits<char>::length(t.text), 0u) << t.name;
  }
  EXPECT_TRUE(has_decode);
  EXPECT_TRUE(has_combine);
  const std::vector<std::string> options = compile_options("sm_100a");
  EXPECT_NE(std::find(options.begin(), options.end(), "--gpu-architecture=sm_100a"), options.end());
  EXPECT_NE(std::find(options.begin(), options.end(), "--ptxas-options=-v"), options.end());
}

}  // namespace
}  // namespace smla
