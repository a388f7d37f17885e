// Every field of a KernelKey that changes the generated code changes its text (so two different
// kernels never share a cache entry), and fields the kernel does not use do not (so one kernel
// is not cached twice).
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>

#include "codegen/kernel_key.h"
#include "cpu/codegen/dsv4_problems.h"

namespace smla {
namespace {

using KeyEdit = std::function<void(KernelKey&)>;

// Applies each edit to its own copy of `base`: every edited text differs from the base text and
// from every other edit's text.
void expect_every_edit_changes_text(const KernelKey& base,
                                    const std::map<std::string, KeyEdit>& edits) {
  std::map<std::string, std::string> seen = {{base.text(), "base"}};
  for (const auto& [field, edit] : edits) {
    SCOPED_TRACE(field);
    KernelKey edited = base;
    edit(edited);
    const auto [previous, inserted] = seen.emplace(edited.text(), field);
    EXPECT_TRUE(inserted) << edited.text() << " is also the text of: " << previous->second;
  }
}

KernelKey csa_decode_key() {
  return KernelKey::decode("sm_90a", test::dsv4_compressed_problem(16, 64, 512), TileConfig{});
}

TEST(KernelKeyFields, EachDecodeFieldChangesTheText) {
  expect_every_edit_changes_text(
      csa_decode_key(),
      {
          {"arch", [](KernelKey& k) { k.arch = "sm_100a"; }},
          {"family", [](KernelKey& k) { k.family = KernelFamily::kCombine; }},
          {"heads", [](KernelKey& k) { k.heads = 15; }},
          {"q dtype", [](KernelKey& k) { k.q_dtype = SMLA_FP8_E4M3; }},
          {"layout uniform", [](KernelKey& k) { k.layout = SMLA_KV_FP8_UNIFORM; }},
          {"layout bf16", [](KernelKey& k) { k.layout = SMLA_KV_BF16; }},
          {"num sources", [](KernelKey& k) { k.num_sources = 1; }},
          {"source 0 page", [](KernelKey& k) { k.page_size[0] = 64; }},
          {"source 0 width", [](KernelKey& k) { k.width[0] = 127; }},
          {"source 1 page", [](KernelKey& k) { k.page_size[1] = 2; }},
          {"source 1 width", [](KernelKey& k) { k.width[1] = 1024; }},
          {"sink", [](KernelKey& k) { k.sink = false; }},
          {"lse", [](KernelKey& k) { k.lse = true; }},
          {"tile heads_per_cta", [](KernelKey& k) { k.tile.heads_per_cta = 32; }},
          {"tile warps", [](KernelKey& k) { k.tile.warps = 8; }},
          {"tile tile_entries", [](KernelKey& k) { k.tile.tile_entries = 32; }},
          {"tile stages", [](KernelKey& k) { k.tile.stages = 4; }},
          {"tile segment_tiles", [](KernelKey& k) { k.tile.segment_tiles = 8; }},
          {"tile min_blocks_per_sm", [](KernelKey& k) { k.tile.min_blocks_per_sm = 2; }},
      });
}

TEST(KernelKeyFields, EachCombineFieldChangesTheText) {
  expect_every_edit_changes_text(
      KernelKey::combine_for(csa_decode_key()),
      {
          {"arch", [](KernelKey& k) { k.arch = "sm_103a"; }},
          {"heads", [](KernelKey& k) { k.heads = 8; }},
          {"heads per CTA", [](KernelKey& k) { k.tile.heads_per_cta = 32; }},
          {"segments", [](KernelKey& k) { k.tile.segment_tiles = 6; }},
          {"sink", [](KernelKey& k) { k.sink = false; }},
          {"lse", [](KernelKey& k) { k.lse = true; }},
      });
}

TEST(KernelKeyFields, UnusedProblemFieldsDoNotChangeTheText) {
  const smla_problem window = test::dsv4_window_problem(16);
  const std::string base = KernelKey::decode("sm_90a", window, TileConfig{}).text();
  {
    SCOPED_TRACE("a one-source problem's second source is not read");
    smla_problem stale = window;
    stale.sources[1] = {SMLA_SOURCE_LIST, 64, 512};
    EXPECT_EQ(KernelKey::decode("sm_90a", stale, TileConfig{}).text(), base);
  }
  {
    SCOPED_TRACE("q_len: a request's rows are ordinary rows, each with its own lists");
    smla_problem mtp = window;
    mtp.q_len = 2;
    EXPECT_EQ(KernelKey::decode("sm_90a", mtp, TileConfig{}).text(), base);
  }
  {
    SCOPED_TRACE("has_sink and want_lse are flags: any nonzero value is 1");
    smla_problem flags = window;
    flags.want_lse = 1;
    smla_problem other_true = flags;
    other_true.has_sink = 7;
    other_true.want_lse = -1;
    EXPECT_EQ(KernelKey::decode("sm_90a", other_true, TileConfig{}).text(),
              KernelKey::decode("sm_90a", flags, TileConfig{}).text());
  }
}

}  // namespace
}  // namespace smla
