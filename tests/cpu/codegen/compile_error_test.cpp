// A source NVRTC cannot compile is SMLA_ERR_COMPILE, and the message carries NVRTC's log (the
// compiler's own error lines), so the cause reaches smla_last_error() and the log.
#include <gtest/gtest.h>

#include <string>

#include "codegen/kernel_key.h"
#include "codegen/kernel_source.h"
#include "codegen/nvrtc_compiler.h"
#include "cpu/codegen/dsv4_problems.h"
#include "support/arch_of.h"

namespace smla {
namespace {

// `expected_in_log`: a piece of the compiler's diagnosis that the message must repeat.
void check_compile_error(const std::string& source, const std::string& arch,
                         const std::string& expected_in_log) {
  SCOPED_TRACE(expected_in_log);
  CompiledKernel compiled;
  const Status status = compile_to_cubin(source, "smla_broken", arch, &compiled);
  EXPECT_EQ(status.code(), SMLA_ERR_COMPILE);
  EXPECT_NE(status.message().find("smla_broken"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find(expected_in_log), std::string::npos) << status.message();
  EXPECT_TRUE(compiled.cubin.empty());
  if (!compiled.log.empty()) {
    EXPECT_NE(status.message().find(compiled.log), std::string::npos) << status.message();
  }
}

TEST(CompileError, ReportsNvrtcLog) {
  check_compile_error("extern \"C\" __global__ void smla_broken() { undeclared_name = 1; }\n",
                      "sm_90a", "undeclared_name");
  check_compile_error("extern \"C\" __global__ void smla_broken() {\n", "sm_100a", "error");
  check_compile_error("#include \"no_such_template.cuh\"\n", "sm_103a", "no_such_template.cuh");
  {
    SCOPED_TRACE("a template's static_assert on a tile the kernel does not support");
    TileConfig tile;
    tile.tile_entries = 40;
    const KernelKey key =
        DecodeKernel::of(test::arch_of("sm_90a"), test::dsv4_compressed_problem(16, 64, 512), tile);
    check_compile_error(kernel_source(key), "sm_90a", "tile entries: 32 or 64");
  }
  {
    SCOPED_TRACE("an architecture NVRTC does not know");
    check_compile_error("extern \"C\" __global__ void smla_broken() {}\n", "sm_1a", "sm_1a");
  }
}

}  // namespace
}  // namespace smla
