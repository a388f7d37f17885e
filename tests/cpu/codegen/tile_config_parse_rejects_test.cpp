// TileConfig::parse accepts the canonical spelling only: anything else (a field missing or
// added, fields reordered, an unknown MMA path, other spellings of the numbers, trailing text) is
// rejected rather than read as a nearby configuration.
#include <gtest/gtest.h>

#include <string>

#include "codegen/tile_config.h"

namespace smla {
namespace {

void expect_rejected(const std::string& text) {
  EXPECT_FALSE(TileConfig::parse(text).has_value()) << '"' << text << '"';
}

TEST(TileConfigParse, RejectsAnythingButTheCanonicalText) {
  ASSERT_TRUE(TileConfig::parse("hg32.w8.te32.st4.seg8.mb1.mma_sync").has_value());
  {
    SCOPED_TRACE("empty and truncated");
    expect_rejected("");
    expect_rejected("hg32");
    expect_rejected("hg32.w8.te32.st4.seg8.mb1");
    expect_rejected("hg32.w8.te32.st4.seg8.mb1.");
  }
  {
    SCOPED_TRACE("a missing field");
    expect_rejected("hg32.w8.te32.st4.seg8.mma_sync");  // the spelling before mb existed
    expect_rejected("w8.te32.st4.seg8.mb1.mma_sync");
    expect_rejected("hg32.te32.st4.seg8.mb1.mma_sync");
    expect_rejected("hg32.w8.te32.seg8.mb1.mma_sync");
  }
  {
    SCOPED_TRACE("an extra or repeated field, fields out of order");
    expect_rejected("hg32.w8.te32.st4.seg8.mb1.x2.mma_sync");
    expect_rejected("hg32.w8.te32.st4.seg8.mb1.mb1.mma_sync");
    expect_rejected("hg32.w8.te32.st4.seg8.mb1.mma_sync.mma_sync");
    expect_rejected("w8.hg32.te32.st4.seg8.mb1.mma_sync");
  }
  {
    SCOPED_TRACE("an unknown MMA path");
    expect_rejected("hg32.w8.te32.st4.seg8.mb1.wgmma_bf16");
    expect_rejected("hg32.w8.te32.st4.seg8.mb1.sync_fp8");
    expect_rejected("hg32.w8.te32.st4.seg8.mb1.sync_bf16");  // the name before f16 products
    expect_rejected("hg32.w8.te32.st4.seg8.mb1.mma_syn");
    expect_rejected("hg32.w8.te32.st4.seg8.mb1.MMA_SYNC");
  }
  {
    SCOPED_TRACE("numbers spelled another way");
    expect_rejected("hg032.w8.te32.st4.seg8.mb1.mma_sync");
    expect_rejected("hg+32.w8.te32.st4.seg8.mb1.mma_sync");
    expect_rejected("hg 32.w8.te32.st4.seg8.mb1.mma_sync");
    expect_rejected("hg32.w8.te32.st4.seg0x8.mb1.mma_sync");
    expect_rejected("hg99999999999.w8.te32.st4.seg8.mb1.mma_sync");
    expect_rejected("HG32.w8.te32.st4.seg8.mb1.mma_sync");
  }
  {
    SCOPED_TRACE("leading or trailing text");
    expect_rejected(" hg32.w8.te32.st4.seg8.mb1.mma_sync");
    expect_rejected("hg32.w8.te32.st4.seg8.mb1.mma_sync ");
    expect_rejected("hg32.w8.te32.st4.seg8.mb1.mma_sync\n");
    expect_rejected("hg32.w8.te32.st4.seg8.mb1.mma_syncx");
    expect_rejected("hg32.w8.te32.st4.seg8.mb1.mma_sync;");
    expect_rejected(std::string("hg32.w8.te32.st4.seg8.mb1.mma_sync\0junk", 39));
  }
}

}  // namespace
}  // namespace smla
