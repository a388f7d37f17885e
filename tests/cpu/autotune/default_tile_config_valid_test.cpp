// The heuristic tile configuration is one the kernel family can build and the GPU can run, for
// every problem a deployment can describe: the DSv4 presets' shapes at every head count 1..128,
// every KV layout and q dtype, and widths up to 65536, on every arch (the wgmma kernel for 128
// heads on Hopper; 16-head entries-on-M CTAs above 16 heads on the consumer parts, whose 99 KB
// hold no heads-on-M tile). A miss in the tuning table falls back to it, so it must never be a
// configuration that fails to compile or to launch.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "autotune/heuristics.h"
#include "codegen/decode_family.h"
#include "codegen/names.h"
#include "cpu/codegen/dsv4_problems.h"

namespace smla {
namespace {

constexpr int kReservedSharedPerBlock = 1024;  // the driver's per-CTA reservation
// Segments of 128 entries up to 12 of them, then 8 segments: the split workspace grows with the
// segment count, and DecodeScheduler's 32 MiB promise rests on it staying small.
constexpr int kMaxSegments = 12;

std::string describe(const smla_problem& p) {
  std::string text = "heads " + std::to_string(p.num_heads) + " layout " +
                     layout_name(p.kv_layout) + " q " + dtype_name(p.q_dtype);
  for (int s = 0; s < p.num_sources; ++s) {
    text += " src" + std::to_string(s) + " p" + std::to_string(p.sources[s].page_size) + "w" +
            std::to_string(p.sources[s].width);
  }
  return text;
}

// The kernel template's static_asserts and the launch limits, restated as checks. Returns false
// after the first failure (one message per bad problem, not thousands).
bool check_valid(const ArchSpec& arch, const smla_problem& problem) {
  SCOPED_TRACE(describe(problem) + " " + arch.name);
  const TileConfig t = default_tile(arch, problem);
  SCOPED_TRACE(t.text());
  const DecodeKernel key = DecodeKernel::of(arch, problem, t);
  const DecodeGeometry g = key.geometry();
  const std::string unsupported = key.unsupported();
  // On Hopper, 128 heads on the fp8 layouts run the wgmma kernel.
  const bool wgmma = arch.wgmma && problem.num_heads == 128 && problem.kv_layout != SMLA_KV_BF16;
  const bool consumer = arch.family == ArchFamily::kBlackwellConsumer;
  const int expected_heads_per_cta = wgmma                                 ? 64
                                     : problem.num_heads <= 8              ? 8
                                     : problem.num_heads <= 16 || consumer ? 16
                                                                           : 32;
  const MmaPath expected_path = wgmma                                 ? MmaPath::kWgmma
                                : problem.num_heads > 16 && !consumer ? MmaPath::kMmaSyncHeadsM
                                                                      : MmaPath::kMmaSync;
  const ::testing::AssertionResult checks[] = {
      ::testing::AssertionResult(unsupported.empty()) << unsupported,
      ::testing::AssertionResult(t.heads_per_cta == expected_heads_per_cta)
          << "heads per CTA: 8 up to 8 heads, 16 up to 16, else 32 (64 for the wgmma kernel)",
      ::testing::AssertionResult(t.mma == expected_path)
          << "the wgmma kernel for 128 heads on Hopper's fp8 layouts, else the "
             "heads-on-M kernel above 16 heads (not on the consumer parts), the entries-on-M "
             "one up to 16",
      ::testing::AssertionResult(g.segments >= 1 && g.segments <= kMaxSegments &&
                                 g.segments * t.segment_tiles >= g.tiles)
          << g.segments << " segments of " << t.segment_tiles << " for " << g.tiles << " tiles",
      ::testing::AssertionResult(g.smem_bytes <= arch.smem_per_cta)
          << "shared memory " << g.smem_bytes << " > " << arch.smem_per_cta,
      // NOTE: min_blocks_per_sm caps registers (__launch_bounds__) for that many CTAs per SM; if
      // their shared memory does not fit, the cap costs registers and buys no occupancy.
      ::testing::AssertionResult(t.min_blocks_per_sm * (g.smem_bytes + kReservedSharedPerBlock) <=
                                 arch.smem_per_sm)
          << t.min_blocks_per_sm << " CTAs of " << g.smem_bytes
          << " bytes of shared memory do not fit in one SM",
  };
  for (const ::testing::AssertionResult& check : checks) {
    EXPECT_TRUE(check);
    if (!check) return false;
  }
  return true;
}

// Widths around every power of two up to SMLA_MAX_WIDTH, where tile and segment counts step.
std::vector<int> widths() {
  std::vector<int> all = {1, 2, 3, 100, 1000, 1536, 1537, 10000};
  for (int w = 16; w <= SMLA_MAX_WIDTH; w *= 2) {
    for (int delta : {-1, 0, 1}) {
      if (w + delta <= SMLA_MAX_WIDTH) all.push_back(w + delta);
    }
  }
  return all;
}

TEST(DefaultTile, IsValidForEveryProblemAndArch) {
  constexpr smla_kv_layout kLayouts[] = {SMLA_KV_FP8_UNIFORM, SMLA_KV_FP8_PACKED, SMLA_KV_BF16};
  int checked = 0, failed = 0;
  const auto check = [&](const smla_problem& problem) {
    for (const ArchSpec& arch : arch_table()) {
      ++checked;
      if (!check_valid(arch, problem)) ++failed;
    }
  };
  for (smla_kv_layout layout : kLayouts) {
    for (smla_dtype q_dtype : {SMLA_BF16, SMLA_FP8_E4M3}) {
      for (int heads = 1; heads <= SMLA_MAX_HEADS; ++heads) {
        // The presets' layer shapes at this head count (q_len changes nothing; see the purity
        // test), then one- and two-source problems across widths.
        std::vector<smla_problem> problems;
        for (const test::NamedProblem& named : test::dsv4_problems()) {
          if (named.problem.q_len == 1) problems.push_back(named.problem);
        }
        for (int width : widths()) {
          smla_problem one = test::dsv4_window_problem(heads);
          one.sources[0].width = width;
          problems.push_back(one);
          problems.push_back(test::dsv4_compressed_problem(heads, 2, width));
        }
        for (smla_problem problem : problems) {
          problem.num_heads = heads;
          problem.kv_layout = layout;
          problem.q_dtype = q_dtype;
          check(problem);
        }
      }
    }
  }
  EXPECT_EQ(failed, 0) << "of " << checked << " problems";
  EXPECT_GT(checked, 25000);
}

}  // namespace
}  // namespace smla
