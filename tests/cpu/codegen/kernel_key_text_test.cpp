// The canonical KernelKey text, spelled out: what `smla cache ls` shows and what the key id
// hashes, so a change to it (which orphans every cached cubin) shows up here first.
#include <gtest/gtest.h>

#include <string>

#include "codegen/kernel_key.h"
#include "cpu/codegen/dsv4_problems.h"

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

void expect_texts(const KernelKey& decode, const std::string& decode_text,
                  const std::string& combine_text) {
  EXPECT_EQ(decode.text(), decode_text);
  EXPECT_STREQ(decode.entry_point(), "smla_decode");
  const KernelKey combine = KernelKey::combine_for(decode);
  EXPECT_EQ(combine.text(), combine_text);
  EXPECT_STREQ(combine.entry_point(), "smla_combine");
}

TEST(KernelKeyText, IsSpelledOutFieldByField) {
  {
    SCOPED_TRACE("DSv4-Flash CSA at TP 4: two sources, 4 + 16 tiles in 5 segments");
    const smla_problem problem = test::dsv4_compressed_problem(16, 64, 512);
    expect_texts(KernelKey::decode("sm_90a", problem, tile(16, 8, 32, 3, 4, 2)),
                 "family=decode;arch=sm_90a;heads=16;layout=fp8_packed;q=bf16;src0=p256w128;"
                 "src1=p64w512;sink=1;lse=0;tile=hg16.w8.te32.st3.seg4.mb2.mma_sync",
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
    expect_texts(KernelKey::decode("sm_100a", problem, tile(32, 4, 64, 2, 8, 1)),
                 "family=decode;arch=sm_100a;heads=8;layout=bf16;q=fp8_e4m3;src0=p256w128;"
                 "sink=0;lse=1;tile=hg32.w4.te64.st2.seg8.mb1.mma_sync",
                 "family=combine;arch=sm_100a;heads=8;hg=32;segments=1;sink=0;lse=1");
  }
  {
    SCOPED_TRACE("DSv4-Pro HCA at TP 1, uniform fp8 KV: 8 + 64 tiles, 9 segments of 8");
    smla_problem problem = test::dsv4_compressed_problem(128, 2, 1024);
    problem.kv_layout = SMLA_KV_FP8_UNIFORM;
    expect_texts(KernelKey::decode("sm_103a", problem, tile(32, 8, 16, 4, 8, 1)),
                 "family=decode;arch=sm_103a;heads=128;layout=fp8_uniform;q=bf16;src0=p256w128;"
                 "src1=p2w1024;sink=1;lse=0;tile=hg32.w8.te16.st4.seg8.mb1.mma_sync",
                 "family=combine;arch=sm_103a;heads=128;hg=32;segments=9;sink=1;lse=0");
  }
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
