// SMLA_TILE forces the tile configuration of every kernel a context builds: a valid text is the
// tile of the compiled kernel (read back from the cache's key texts), and a bad value is
// SMLA_ERR_INVALID_ARGUMENT naming the variable, never a crash or a compile error: from
// smla_context_create for a text that is no tile, from smla_prepare for a tile the problem
// cannot run.
#include <set>
#include <string>

#include "context_fixture.h"

namespace smla::context_test {
namespace {

using ContextForcedTile = NoGpuContextTest;

struct Prepared {
  smla_status status;
  std::string message;  // read before the context is destroyed
};

// The status of creating a context with SMLA_TILE = `tile`, or of preparing a problem there.
Prepared prepare_with_tile(const char* tile) {
  ScopedEnv forced("SMLA_TILE", tile);
  const smla_options options = compile_only_options("");
  smla_context* raw = nullptr;
  const smla_status created = smla_context_create(&options, &raw);
  if (created != SMLA_OK) return {created, smla_last_error()};
  ContextPtr context(raw);
  const smla_problem problem = split_problem();
  size_t workspace = 0;
  const smla_status status = smla_prepare(context.get(), &problem, 64, &workspace);
  return {status, smla_last_error()};
}

TEST_F(ContextForcedTile, ValidTextIsTheCompiledTile) {
  // Not the heuristic's tile for this problem: other stages, segments and occupancy hint.
  const std::string tile_text = "hg16.w8.te32.st3.seg5.mb1.mma_sync";
  const smla_problem problem = split_problem();
  ASSERT_NE(default_tile(test::arch_of("sm_90a"), problem).text(), tile_text);
  TempDir dir;
  const std::string cache = dir.file("cache.sqlite");
  {
    ScopedEnv forced("SMLA_TILE", tile_text.c_str());
    const smla_options options = compile_only_options(cache.c_str());
    ContextPtr context = create_context(&options);
    ASSERT_NE(context, nullptr);
    size_t workspace = 0;
    ASSERT_EQ(smla_prepare(context.get(), &problem, 64, &workspace), SMLA_OK) << smla_last_error();
  }
  const DecodeKernel decode =
      DecodeKernel::of(test::arch_of("sm_90a"), problem, *TileConfig::parse(tile_text));
  // 4 + 16 tiles in segments of 5: the combine kernel folds 4 segments.
  EXPECT_EQ(cached_key_texts(cache),
            (std::set<std::string>{decode.text(), decode.combine().text()}));
  EXPECT_NE(decode.text().find(";tile=" + tile_text), std::string::npos);
  EXPECT_NE(decode.combine().text().find(";segments=4;"), std::string::npos);
}

TEST_F(ContextForcedTile, MalformedTextIsInvalidArgument) {
  for (const char* bad :
       {"fast", "hg16.w8.te32.st3.seg5.mma_sync", "hg16.w8.te32.st3.seg5.mb1.tcgen05",
        "hg16.w8.te32.st3.seg5.mb1.mma_sync "}) {
    SCOPED_TRACE(std::string("SMLA_TILE=\"") + bad + "\"");
    const Prepared prepared = prepare_with_tile(bad);
    EXPECT_EQ(prepared.status, SMLA_ERR_INVALID_ARGUMENT);
    EXPECT_NE(prepared.message.find("SMLA_TILE"), std::string::npos) << prepared.message;
  }
}

// Values the kernel family does not support are SMLA_ERR_INVALID_ARGUMENT naming SMLA_TILE,
// checked before anything divides by them (zero heads per CTA, tile entries or segment tiles
// once killed the process with SIGFPE, a huge segment overflowed) and before NVRTC's
// static_asserts. Each case runs in a child process so that a crash fails this test only.
TEST_F(ContextForcedTile, UnsupportedValuesAreInvalidArgument) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (const char* bad :
       {"hg0.w8.te32.st2.seg4.mb2.mma_sync", "hg16.w8.te0.st2.seg4.mb2.mma_sync",
        "hg16.w8.te32.st2.seg0.mb2.mma_sync", "hg16.w0.te32.st2.seg4.mb2.mma_sync",
        "hg16.w8.te32.st0.seg4.mb2.mma_sync", "hg16.w8.te32.st2.seg4.mb0.mma_sync",
        "hg-16.w8.te32.st2.seg4.mb2.mma_sync", "hg24.w8.te32.st2.seg4.mb2.mma_sync",
        "hg16.w3.te32.st2.seg4.mb2.mma_sync", "hg16.w8.te40.st2.seg4.mb2.mma_sync",
        "hg8.w8.te64.st2.seg2.mb1.mma_sync_hm", "hg32.w16.te64.st2.seg2.mb1.mma_sync_hm",
        "hg32.w16.te128.st2.seg1.mb1.mma_sync_hm", "hg16.w4.te32.st2.seg4.mb1.mma_sync_hm",
        "hg64.w8.te64.st2.seg0.mb1.wgmma", "hg16.w8.te32.st2.seg2147483647.mb1.mma_sync",
        "hg16.w8.te32.st2.seg4097.mb1.mma_sync"}) {
    SCOPED_TRACE(std::string("SMLA_TILE=") + bad);
    EXPECT_EXIT(
        {
          const Prepared prepared = prepare_with_tile(bad);
          const bool named = prepared.message.find("SMLA_TILE") != std::string::npos;
          std::_Exit(named ? prepared.status : SMLA_ERR_INTERNAL);
        },
        ::testing::ExitedWithCode(SMLA_ERR_INVALID_ARGUMENT), "");
  }
}

}  // namespace
}  // namespace smla::context_test
