// libFuzzer target: tile texts (codegen/tile_config.h, docs/fuzzing.md), which reach the library
// from SMLA_TILE and from the cache's tuning rows. The input is one text. Checked: a text that
// parses is canonical (it prints back to itself) and its printed text parses to the same
// configuration, field by field; then, for DeepSeek-V4 problems on every arch, the tile's checks
// (DecodeKernel::unsupported), a tuning row's filter (usable_tuned_tile) and plans that run it
// (forced as SMLA_TILE, and as a tuning row) stay within their contracts. Key texts
// (KernelKey::text) are printed only, never parsed: there is no key parser to fuzz.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autotune/tuning.h"
#include "codegen/arch.h"
#include "codegen/decode_family.h"
#include "codegen/tile_config.h"
#include "cpu/codegen/dsv4_problems.h"
#include "plan/decode_plan.h"

namespace smla::fuzz {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& text) {
  std::fprintf(stderr, "fuzz_tile_config: %s (tile text \"%s\")\n", what.c_str(), text.c_str());
  std::abort();
}

bool same_fields(const TileConfig& a, const TileConfig& b) {
  return a.heads_per_cta == b.heads_per_cta && a.warps == b.warps &&
         a.tile_entries == b.tile_entries && a.stages == b.stages &&
         a.segment_tiles == b.segment_tiles && a.min_blocks_per_sm == b.min_blocks_per_sm &&
         a.mma == b.mma;
}

// DeepSeek-V4 layer types of different heads, layouts and widths, and the widest problem the API
// takes (the most tiles and segments a row can have).
std::vector<smla_problem> problems() {
  std::vector<smla_problem> all = {test::dsv4_window_problem(8),
                                   test::dsv4_compressed_problem(16, 64, 512),
                                   test::dsv4_compressed_problem(128, 2, 1024)};
  all[2].q_dtype = SMLA_FP8_E4M3;
  all[2].kv_layout = SMLA_KV_FP8_UNIFORM;
  all.push_back(test::dsv4_compressed_problem(64, 64, 1024));
  all[3].kv_layout = SMLA_KV_BF16;
  smla_problem widest = test::dsv4_compressed_problem(1, 1, SMLA_MAX_WIDTH);
  widest.sources[0].width = SMLA_MAX_WIDTH;
  all.push_back(widest);
  return all;
}

// Calls of a few row counts of `bucket`, up to the API's most rows: each picks a kernel of the
// plan and needs no more workspace than prepare would return for it.
void check_calls(const DecodePlan& plan, const std::string& text) {
  for (const int rows : {1, 2, 3, 64, 1000, 8192, 1 << 24}) {
    const size_t workspace = plan.workspace_bytes(rows);
    const PlannedCall call = plan.call(rows, workspace);
    if (call.kernel < 0 || call.kernel >= static_cast<int>(plan.kernels().size())) {
      fail("a call runs a kernel the plan does not have", text);
    }
    if (call.launch.workspace_bytes > workspace)
      fail("a call needs more workspace than prepare's", text);
  }
}

void check_on(const ArchSpec& arch, const smla_problem& problem, const TileConfig& tile,
              const std::string& text) {
  const DecodeKernel kernel = DecodeKernel::of(arch, problem, tile);
  const std::string unsupported = kernel.unsupported();
  for (const bool batch_variant : {false, true}) {
    std::string why;
    const std::optional<TileConfig> usable =
        usable_tuned_tile(arch, problem, batch_variant, text, &why);
    if (usable && (!unsupported.empty() || !same_fields(*usable, tile))) {
      fail("a tuning row's tile is usable where the tile is not", text);
    }
    if (!usable && why.empty()) fail("an unusable tuning row without a reason", text);
    if (usable) {
      std::unique_ptr<DecodePlan> plan;
      PlanSettings settings;
      settings.batch_variant = batch_variant;
      const Status built = DecodePlan::build(arch, problem, settings, {{64, *usable}}, &plan);
      if (!built) fail("a usable tuning row fails the plan: " + built.message(), text);
      check_calls(*plan, text);
    }
  }
  PlanSettings forced;
  forced.forced_tile = tile;
  std::unique_ptr<DecodePlan> plan;
  const Status built = DecodePlan::build(arch, problem, forced, {}, &plan);
  if (built.is_ok() != unsupported.empty())
    fail("SMLA_TILE's plan disagrees with the tile's checks", text);
  if (!built) {
    if (built.code() != SMLA_ERR_INVALID_ARGUMENT)
      fail("a forced tile's status is not INVALID_ARGUMENT", text);
    return;
  }
  (void)kernel.text();
  (void)kernel.prologue();
  if (kernel.geometry().segments > 1) (void)kernel.combine().text();
  check_calls(*plan, text);
}

}  // namespace
}  // namespace smla::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace smla;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::optional<TileConfig> parsed = TileConfig::parse(text);
  if (!parsed) return 0;
  if (parsed->text() != text) fuzz::fail("a parsed text that does not print back to itself", text);
  const std::optional<TileConfig> again = TileConfig::parse(parsed->text());
  if (!again || !fuzz::same_fields(*again, *parsed)) {
    fuzz::fail("the printed text parses to another configuration", text);
  }
  static const std::vector<smla_problem> problems = fuzz::problems();
  for (const ArchSpec& arch : arch_table()) {
    for (const smla_problem& problem : problems) fuzz::check_on(arch, problem, *parsed, text);
  }
  return 0;
}
