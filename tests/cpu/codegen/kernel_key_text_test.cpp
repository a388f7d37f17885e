// The canonical KernelKey text, spelled out: what `smla cache ls` shows and what the key id
// hashes, so a change to it (which orphans every cached cubin) shows up here first.
#include <gtest/gtest.h>

#include <string>

#include "codegen/kernel_key.h"
#include "codegen/names.h"
#include "cpu/codegen/dsv4_problems.h"
#include "support/arch_of.h"

namespace smla {
namespace {

TileConfig tile(int heads_per_cta, int warps, int tile_entries, int stages, int segment_tiles,
                int min_blocks_per_sm) {
  TileConfig config;
  config.heads_per_cta = heads_per_cta;
  config.warps = warps;
  config.tile_entries = tile_entries;
  config.stages = stages;
  config.segment_tiles = segment_tiles;
  config.min_blocks_per_sm = min_blocks_per_sm;
  return config;
}

void expect_texts(const DecodeKernel& decode, const std::string& decode_text,
                  const std::string& combine_text) {
  const KernelKey key = decode;
  EXPECT_EQ(key.text(), decode_text);
  ASSERT_EQ(key.entry_points().size(), 1u);
  EXPECT_STREQ(key.entry_points()[0], "smla_decode");
  const KernelKey combine = decode.combine();
  EXPECT_EQ(combine.text(), combine_text);
  ASSERT_EQ(combine.entry_points().size(), 2u);
  EXPECT_STREQ(combine.entry_points()[0], "smla_combine");
  EXPECT_STREQ(combine.entry_points()[1], "smla_combine_prefix");
}

TEST(KernelKeyText, IsSpelledOutFieldByField) {
  {
    SCOPED_TRACE("DSv4-Flash CSA at TP 4: two sources, 4 + 16 tiles in 5 segments");
    const smla_problem problem = test::dsv4_compressed_problem(16, 64, 512);
    expect_texts(DecodeKernel::of(test::arch_of("sm_90a"), problem, tile(16, 8, 32, 3, 4, 2)),
                 "family=decode;arch=sm_90a;heads=16;q=bf16;src0=fp8_packed.p256.w128;"
                 "src1=fp8_packed.p64.w512;sink=1;lse=0;qk=16bit;"
                 "tile=hg16.w8.te32.st3.seg4.mb2.mma_sync",
                 "family=combine;arch=sm_90a;heads=16;hg=16;segments=5;sink=1;lse=0");
  }
  {
    SCOPED_TRACE("one source, fp8 q, bf16 KV, MTP, lse without sink: 2 tiles in 1 segment");
    smla_problem problem = test::dsv4_window_problem(8);
    problem.q_dtype = SMLA_FP8_E4M3;
    problem.kv_layout = SMLA_KV_BF16;
    problem.q_len = 2;
    problem.has_sink = 0;
    problem.want_lse = 1;
    expect_texts(DecodeKernel::of(test::arch_of("sm_100a"), problem, tile(32, 4, 64, 2, 8, 1)),
                 "family=decode;arch=sm_100a;heads=8;q=fp8_e4m3;src0=bf16.p256.w128;"
                 "sink=0;lse=1;qk=16bit;tile=hg32.w4.te64.st2.seg8.mb1.mma_sync",
                 "family=combine;arch=sm_100a;heads=8;hg=32;segments=1;sink=0;lse=1");
  }
  {
    SCOPED_TRACE("DSv4-Pro HCA at TP 1, uniform fp8 KV: 8 + 64 tiles, 9 segments of 8");
    smla_problem problem = test::dsv4_compressed_problem(128, 2, 1024);
    problem.kv_layout = SMLA_KV_FP8_UNIFORM;
    expect_texts(DecodeKernel::of(test::arch_of("sm_103a"), problem, tile(32, 8, 16, 4, 8, 1)),
                 "family=decode;arch=sm_103a;heads=128;q=bf16;src0=fp8_uniform.p256.w128;"
                 "src1=fp8_uniform.p2.w1024;sink=1;lse=0;qk=16bit;"
                 "tile=hg32.w8.te16.st4.seg8.mb1.mma_sync",
                 "family=combine;arch=sm_103a;heads=128;hg=32;segments=9;sink=1;lse=0");
  }
}

TEST(KernelKeyText, NamesStructuredSources) {
  const smla_problem hca = test::dsv4_structured_problem(16, 2, 1024, 128);
  expect_texts(DecodeKernel::of(test::arch_of("sm_90a"), hca, tile(16, 8, 32, 3, 4, 2)),
               "family=decode;arch=sm_90a;heads=16;q=bf16;src0=fp8_packed.p256.w128.window;"
               "src1=fp8_packed.p2.w1024.prefix128;sink=1;lse=0;qk=16bit;"
               "tile=hg16.w8.te32.st3.seg4.mb2.mma_sync",
               "family=combine;arch=sm_90a;heads=16;hg=16;segments=9;sink=1;lse=0");
  EXPECT_STREQ(source_kind_name(SMLA_SOURCE_LIST), "list");
  EXPECT_STREQ(source_kind_name(SMLA_SOURCE_WINDOW), "window");
  EXPECT_STREQ(source_kind_name(SMLA_SOURCE_PREFIX), "prefix");
}

TEST(KernelKeyText, NamesTheE4m3ScoresOfEachPath) {
  smla_problem problem = test::dsv4_compressed_problem(128, 64, 1024);
  problem.kv_layout = SMLA_KV_FP8_UNIFORM;
  problem.q_dtype = SMLA_FP8_E4M3;
  TileConfig wgmma = tile(64, 8, 64, 2, 3, 1);
  wgmma.mma = MmaPath::kWgmma;
  const DecodeKernel e4m3 = DecodeKernel::of(test::arch_of("sm_90a"), problem, wgmma);
  EXPECT_NE(e4m3.text().find(";qk=e4m3;"), std::string::npos) << e4m3.text();
  problem.want_lse = 1;  // the wgmma kernel's e4m3 sums would cost the lse its tolerance
  const DecodeKernel with_lse = DecodeKernel::of(test::arch_of("sm_90a"), problem, wgmma);
  EXPECT_NE(with_lse.text().find(";qk=16bit;"), std::string::npos) << with_lse.text();
}

TEST(KernelKeyText, NamesLayoutsAndDtypes) {
  EXPECT_STREQ(layout_name(SMLA_KV_FP8_UNIFORM), "fp8_uniform");
  EXPECT_STREQ(layout_name(SMLA_KV_FP8_PACKED), "fp8_packed");
  EXPECT_STREQ(layout_name(SMLA_KV_BF16), "bf16");
  EXPECT_STREQ(dtype_name(SMLA_BF16), "bf16");
  EXPECT_STREQ(dtype_name(SMLA_FP8_E4M3), "fp8_e4m3");
}

}  // namespace
}  // namespace smla
