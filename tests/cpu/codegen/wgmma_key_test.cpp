// The wgmma path is a key for Hopper only: its tile is refused, with the reason, on the other
// architectures, for the bf16 layout, for another CTA shape and for more than two stages; for
// sm_90a the key's kernel compiles for both fp8 layouts and q dtypes at 64 and 128 heads, whole
// rows and in segments, with e4m3 scores for fp8 q on the uniform layout only without the lse.
#include <gtest/gtest.h>

#include <string>

#include "codegen/kernel_key.h"
#include "codegen/kernel_source.h"
#include "codegen/nvrtc_compiler.h"
#include "cpu/codegen/dsv4_problems.h"
#include "support/arch_of.h"

namespace smla {
namespace {

// The wgmma tile as SMLA_TILE spells it.
TileConfig wgmma_tile() { return *TileConfig::parse("hg64.w8.te64.st2.seg256.mb1.wgmma"); }

DecodeKernel kernel(const char* arch, const smla_problem& problem, const TileConfig& tile) {
  return DecodeKernel::of(test::arch_of(arch), problem, tile);
}

void expect_refused(const DecodeKernel& key, const std::string& reason) {
  SCOPED_TRACE(key.text());
  EXPECT_NE(key.unsupported().find(reason), std::string::npos) << key.unsupported();
}

TEST(WgmmaKey, RefusedOutsideItsShape) {
  const smla_problem csa = test::dsv4_compressed_problem(128, 64, 1024);
  EXPECT_EQ(kernel("sm_90a", csa, wgmma_tile()).unsupported(), "");
  for (const char* arch : {"sm_100a", "sm_103a", "sm_120a", "sm_121a"}) {
    expect_refused(kernel(arch, csa, wgmma_tile()), std::string("wgmma does not run on ") + arch);
  }
  smla_problem bf16 = csa;
  bf16.kv_layout = SMLA_KV_BF16;
  expect_refused(kernel("sm_90a", bf16, wgmma_tile()), "fp8 layouts");
  TileConfig narrow = wgmma_tile();
  narrow.heads_per_cta = 32;
  expect_refused(kernel("sm_90a", csa, narrow), "64 heads per CTA");
  TileConfig deeper = wgmma_tile();
  deeper.stages = 3;
  expect_refused(kernel("sm_90a", csa, deeper), "two stages");
  smla_problem e4m3 = csa;  // fp8 q on the uniform layout: room for three, but not run so
  e4m3.kv_layout = SMLA_KV_FP8_UNIFORM;
  e4m3.q_dtype = SMLA_FP8_E4M3;
  expect_refused(kernel("sm_90a", e4m3, deeper), "two stages");
  TileConfig segmented = wgmma_tile();
  segmented.segment_tiles = 2;  // 18 tiles in 9 segments: the default mode's kind of tile
  EXPECT_EQ(kernel("sm_90a", csa, segmented).unsupported(), "");
}

void compile_for_sm90a(const DecodeKernel& key) {
  SCOPED_TRACE(key.text());
  ASSERT_EQ(key.unsupported(), "");
  CompiledKernel compiled;
  // The device's map must be the host's (smem_bytes sizes the launch).
  const std::string source =
      kernel_source(key) + "\nstatic_assert(smla::decode::kGeo.smem_bytes == " +
      std::to_string(key.geometry().smem_bytes) + ", \"the host's shared-memory map\");\n";
  const Status status =
      compile_to_cubin(source, DecodeKernel::kEntryPoint, key.arch->name, &compiled);
  EXPECT_TRUE(status.is_ok()) << status.message();
  EXPECT_FALSE(compiled.cubin.empty());
}

// fp8 q on the uniform layout takes e4m3 scores from operand stages (a smaller map: an fp8
// query tile) only without the lse, whose tolerance their sums would miss.
TEST(WgmmaKey, E4m3ScoresOnlyWithoutTheLse) {
  smla_problem p = test::dsv4_compressed_problem(128, 64, 1024);
  p.kv_layout = SMLA_KV_FP8_UNIFORM;
  p.q_dtype = SMLA_FP8_E4M3;
  p.want_lse = 0;
  const DecodeKernel e4m3 = kernel("sm_90a", p, wgmma_tile());
  p.want_lse = 1;
  const DecodeKernel with_lse = kernel("sm_90a", p, wgmma_tile());
  EXPECT_TRUE(e4m3_operand_stages(e4m3.shape()));
  EXPECT_FALSE(e4m3_operand_stages(with_lse.shape()));
  EXPECT_LT(e4m3.geometry().smem_bytes, with_lse.geometry().smem_bytes);
  p.q_dtype = SMLA_BF16;
  p.want_lse = 0;
  EXPECT_FALSE(e4m3_operand_stages(kernel("sm_90a", p, wgmma_tile()).shape()));
}

TEST(WgmmaKey, CompilesForSm90a) {
  for (int heads : {64, 128}) {
    for (smla_kv_layout layout : {SMLA_KV_FP8_PACKED, SMLA_KV_FP8_UNIFORM}) {
      for (smla_dtype q : {SMLA_BF16, SMLA_FP8_E4M3}) {
        for (int lse : {0, 1}) {  // with fp8 q on the uniform layout, e4m3 or bf16 scores
          smla_problem p = test::dsv4_compressed_problem(heads, 64, 512);
          p.kv_layout = layout;
          p.q_dtype = q;
          p.want_lse = lse;
          compile_for_sm90a(kernel("sm_90a", p, wgmma_tile()));
          if (heads == 128 && lse == 0) {  // segments: the default mode's kind of tile
            TileConfig segmented = wgmma_tile();
            segmented.segment_tiles = 3;
            compile_for_sm90a(kernel("sm_90a", p, segmented));
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace smla
