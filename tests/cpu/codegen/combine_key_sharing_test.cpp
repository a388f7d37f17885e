// The combine kernel reads only the heads, the segment count and the sink/lse flags, so problems
// that differ in anything else share one combine kernel (one cache entry, one compile), and
// problems that differ in those do not.
#include <gtest/gtest.h>

#include <string>

#include "codegen/kernel_key.h"
#include "cpu/codegen/dsv4_problems.h"
#include "support/arch_of.h"

namespace smla {
namespace {

struct ProblemEdit {
  const char* what;
  void (*apply)(smla_problem&);  // changes the decode kernel
  bool changes_combine;
};

DecodeKernel decode_kernel(const smla_problem& problem, const TileConfig& tile = TileConfig{}) {
  return DecodeKernel::of(test::arch_of("sm_100a"), problem, tile);
}

KernelKey combine_key(const smla_problem& problem, const TileConfig& tile = TileConfig{}) {
  return decode_kernel(problem, tile).combine();
}

void check_edit(const ProblemEdit& edit) {
  SCOPED_TRACE(edit.what);
  const smla_problem base = test::dsv4_compressed_problem(32, 64, 512);
  smla_problem edited = base;
  edit.apply(edited);
  EXPECT_NE(decode_kernel(edited).text(), decode_kernel(base).text());
  if (edit.changes_combine) {
    EXPECT_NE(combine_key(edited).text(), combine_key(base).text());
  } else {
    EXPECT_EQ(combine_key(edited).text(), combine_key(base).text());
    EXPECT_EQ(combine_key(edited).id("fingerprint"), combine_key(base).id("fingerprint"));
  }
}

TEST(CombineKeySharing, DependsOnHeadsSegmentsAndFlagsOnly) {
  const ProblemEdit edits[] = {
      {"layout uniform", [](smla_problem& p) { p.kv_layout = SMLA_KV_FP8_UNIFORM; }, false},
      {"layout bf16", [](smla_problem& p) { p.kv_layout = SMLA_KV_BF16; }, false},
      {"q dtype", [](smla_problem& p) { p.q_dtype = SMLA_FP8_E4M3; }, false},
      {"window page", [](smla_problem& p) { p.sources[0].page_size = 64; }, false},
      {"compressed page", [](smla_problem& p) { p.sources[1].page_size = 2; }, false},
      // 2 + 8 tiles of 64 in 5 segments of 2; 2 + 8 still for width 450.
      {"width, same segments", [](smla_problem& p) { p.sources[1].width = 450; }, false},
      {"heads", [](smla_problem& p) { p.num_heads = 24; }, true},
      {"width, more segments", [](smla_problem& p) { p.sources[1].width = 1024; }, true},
      {"sink", [](smla_problem& p) { p.has_sink = 0; }, true},
      {"lse", [](smla_problem& p) { p.want_lse = 1; }, true},
  };
  for (const ProblemEdit& edit : edits) check_edit(edit);
}

TEST(CombineKeySharing, IgnoresTileFieldsThatKeepTheSegments) {
  const smla_problem problem = test::dsv4_compressed_problem(16, 64, 512);
  TileConfig base;
  TileConfig other = base;
  other.warps = 8;
  other.stages = 2;
  other.min_blocks_per_sm = 2;
  EXPECT_EQ(combine_key(problem, other).text(), combine_key(problem, base).text());
  other.tile_entries = 32;  // 4 + 16 tiles in 10 segments instead of 5
  EXPECT_NE(combine_key(problem, other).text(), combine_key(problem, base).text());
}

}  // namespace
}  // namespace smla
