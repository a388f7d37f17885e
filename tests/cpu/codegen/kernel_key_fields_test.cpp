// Every field of a KernelKey that changes the generated code changes its text (so two different
// kernels never share a cache entry), and fields the kernel does not use do not (so one kernel
// is not cached twice).
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>

#include "codegen/kernel_key.h"
#include "cpu/codegen/dsv4_problems.h"
#include "support/arch_of.h"

namespace smla {
namespace {

// Applies each edit to its own copy of `base`: every edited text differs from the base text and
// from every other edit's text.
template <typename Kernel>
void expect_every_edit_changes_text(
    const Kernel& base, const std::map<std::string, std::function<void(Kernel&)>>& edits) {
  std::map<std::string, std::string> seen = {{base.text(), "base"}};
  for (const auto& [field, edit] : edits) {
    SCOPED_TRACE(field);
    Kernel edited = base;
    edit(edited);
    const auto [previous, inserted] = seen.emplace(edited.text(), field);
    EXPECT_TRUE(inserted) << edited.text() << " is also the text of: " << previous->second;
  }
}

DecodeKernel csa_decode_key() {
  return DecodeKernel::of(test::arch_of("sm_90a"), test::dsv4_compressed_problem(16, 64, 512),
                          TileConfig{});
}

DecodeKernel decode_key(const smla_problem& problem) {
  return DecodeKernel::of(test::arch_of("sm_90a"), problem, TileConfig{});
}

TEST(KernelKeyFields, EachDecodeFieldChangesTheText) {
  using Edit = std::function<void(DecodeKernel&)>;
  expect_every_edit_changes_text<DecodeKernel>(
      csa_decode_key(),
      {
          {"arch", Edit([](DecodeKernel& k) { k.arch = &test::arch_of("sm_100a"); })},
          {"heads", Edit([](DecodeKernel& k) { k.heads = 15; })},
          {"q dtype", Edit([](DecodeKernel& k) { k.q_dtype = SMLA_FP8_E4M3; })},
          {"source 0 layout", Edit([](DecodeKernel& k) { k.sources[0].layout = SMLA_KV_BF16; })},
          {"source 1 layout",
           Edit([](DecodeKernel& k) { k.sources[1].layout = SMLA_KV_FP8_UNIFORM; })},
          {"num sources", Edit([](DecodeKernel& k) { k.num_sources = 1; })},
          {"source 0 page", Edit([](DecodeKernel& k) { k.sources[0].page_size = 64; })},
          {"source 0 width", Edit([](DecodeKernel& k) { k.sources[0].width = 127; })},
          {"source 1 page", Edit([](DecodeKernel& k) { k.sources[1].page_size = 2; })},
          {"source 1 width", Edit([](DecodeKernel& k) { k.sources[1].width = 1024; })},
          {"sink", Edit([](DecodeKernel& k) { k.sink = false; })},
          {"lse", Edit([](DecodeKernel& k) { k.lse = true; })},
          {"e4m3 scores", Edit([](DecodeKernel& k) { k.e4m3_scores = true; })},
          {"tile heads_per_cta", Edit([](DecodeKernel& k) { k.tile.heads_per_cta = 32; })},
          {"tile warps", Edit([](DecodeKernel& k) { k.tile.warps = 8; })},
          {"tile tile_entries", Edit([](DecodeKernel& k) { k.tile.tile_entries = 32; })},
          {"tile stages", Edit([](DecodeKernel& k) { k.tile.stages = 4; })},
          {"tile segment_tiles", Edit([](DecodeKernel& k) { k.tile.segment_tiles = 8; })},
          {"tile min_blocks_per_sm", Edit([](DecodeKernel& k) { k.tile.min_blocks_per_sm = 2; })},
          {"tile mma path", Edit([](DecodeKernel& k) { k.tile.mma = MmaPath::kMmaSyncHeadsM; })},
      });
  EXPECT_NE(KernelKey(csa_decode_key()).text(), KernelKey(csa_decode_key().combine()).text());
}

TEST(KernelKeyFields, EachCombineFieldChangesTheText) {
  using Edit = std::function<void(CombineKernel&)>;
  expect_every_edit_changes_text<CombineKernel>(
      csa_decode_key().combine(),
      {
          {"arch", Edit([](CombineKernel& k) { k.arch = &test::arch_of("sm_103a"); })},
          {"heads", Edit([](CombineKernel& k) { k.heads = 8; })},
          {"heads per CTA", Edit([](CombineKernel& k) { k.heads_per_cta = 32; })},
          {"segments", Edit([](CombineKernel& k) { k.segments = 6; })},
          {"sink", Edit([](CombineKernel& k) { k.sink = false; })},
          {"lse", Edit([](CombineKernel& k) { k.lse = true; })},
      });
}

TEST(KernelKeyFields, UnusedProblemFieldsDoNotChangeTheText) {
  const smla_problem window = test::dsv4_window_problem(16);
  const std::string base = decode_key(window).text();
  {
    SCOPED_TRACE("a one-source problem's second source is not read");
    smla_problem stale = window;
    stale.sources[1] = {SMLA_SOURCE_LIST, 64, 512, 0};
    EXPECT_EQ(decode_key(stale).text(), base);
  }
  {
    SCOPED_TRACE("q_len: a request's rows are ordinary rows, each with its own lists");
    smla_problem mtp = window;
    mtp.q_len = 2;
    EXPECT_EQ(decode_key(mtp).text(), base);
  }
  {
    SCOPED_TRACE("has_sink and want_lse are flags: any nonzero value is 1");
    smla_problem flags = window;
    flags.want_lse = 1;
    smla_problem other_true = flags;
    other_true.has_sink = 7;
    other_true.want_lse = -1;
    EXPECT_EQ(decode_key(other_true).text(), decode_key(flags).text());
  }
}

}  // namespace
}  // namespace smla
