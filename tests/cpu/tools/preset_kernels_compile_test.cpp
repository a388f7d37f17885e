// Every kernel a DSv4 preset deployment can dispatch to compiles with NVRTC for every arch of
// the table (sm_90a, sm_100a, sm_103a, sm_120a, sm_121a), without register spills or a stack
// frame (but for the folded total of the 128-head wgmma default; the cubins never run here:
// compiling them is the test). This is what `smla cache build` does for a deployment, and a
// template or plan change that breaks one arch or spills on one shape fails here, on a CPU
// machine. The other KV layouts and fp8 q, which the kernel family supports but no preset
// uses, are compiled for one Flash and one Pro preset, for sm_90a and sm_100a (and fp8 q for
// sm_120a); window and prefix sources for every arch.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "codegen/kernel_key.h"
#include "codegen/kernel_source.h"
#include "codegen/nvrtc_compiler.h"
#include "cpu/codegen/dsv4_problems.h"
#include "deployments/deployment.h"
#include "plan/decode_plan.h"

namespace smla::tools {
namespace {

const std::vector<const char*> kArchs = {"sm_90a", "sm_100a", "sm_103a", "sm_120a", "sm_121a"};
// One arch of each family, which the HCA widths of the other contexts compile for: sm_103a
// compiles the source of sm_100a, sm_121a that of sm_120a but for the plan's wave.
const std::vector<const char*> kFamilyArchs = {"sm_90a", "sm_100a", "sm_120a"};
constexpr int kMaxContext = 131072;  // the presets' default: HCA width 1024

// The kernels smla_prepare loads for `problem` on `archs`, keyed by text so shared kernels
// compile once.
void add_kernels(const smla_problem& problem, const std::vector<const char*>& archs,
                 std::map<std::string, KernelKey>* keys) {
  for (const char* arch : archs) {
    for (const KernelKey& key : prewarm_kernels(*find_arch(arch), problem)) {
      keys->emplace(key.text(), key);
    }
  }
}

std::vector<smla_problem> preset_problems(const std::string& preset,
                                          int max_context = kMaxContext) {
  Deployment deployment;
  const Status status = preset_deployment(preset, max_context, &deployment);
  EXPECT_TRUE(status) << preset << ": " << status.message();
  std::vector<smla_problem> problems;
  for (const auto& named : deployment.problems()) problems.push_back(named.second);
  EXPECT_FALSE(problems.empty()) << preset;
  return problems;
}

struct CompileResult {
  Status status;
  CompiledKernel kernel;
};

// Compiles every key, in the order of `keys`.
// NOTE: one at a time: NVRTC compiles one program at a time in a process (two threads measured
// no faster), so the suite runs these tests as separate processes (one per arch) instead.
std::vector<CompileResult> compile_all(const std::vector<KernelKey>& keys) {
  std::vector<CompileResult> results(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    results[i].status = compile_to_cubin(kernel_source(keys[i]), keys[i].entry_points()[0],
                                         keys[i].arch().name, &results[i].kernel);
  }
  return results;
}

void check_compiled(const KernelKey& key, const CompileResult& result) {
  SCOPED_TRACE(key.text());
  ASSERT_TRUE(result.status) << result.status.message();
  EXPECT_FALSE(result.kernel.cubin.empty());
  const std::string& log = result.kernel.log;
  EXPECT_EQ(log.find("Registers are spilled"), std::string::npos) << log;
  // The wgmma kernel's whole-row folds keep their total in local memory (128 floats a thread).
  const bool local_total = key.decode() && key.decode()->tile.mma == MmaPath::kWgmma &&
                           key.decode()->geometry().segments > 1;
  EXPECT_NE(log.find(local_total ? " 512 bytes stack frame" : " 0 bytes stack frame"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find(" 0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << log;
}

// Compiles `keys` and checks every result; returns the number of kernels.
size_t compile_and_check(const std::string& what, const std::map<std::string, KernelKey>& keys) {
  std::vector<KernelKey> ordered;
  for (const auto& entry : keys) ordered.push_back(entry.second);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<CompileResult> results = compile_all(ordered);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (size_t i = 0; i < ordered.size(); ++i) check_compiled(ordered[i], results[i]);
  std::printf("%s: compiled %zu kernels in %.1f s\n", what.c_str(), ordered.size(), seconds);
  return ordered.size();
}

class PresetKernelsCompile : public ::testing::TestWithParam<const char*> {};

TEST_P(PresetKernelsCompile, EveryPresetKernel) {
  const char* arch = GetParam();
  const bool family = std::find_if(kFamilyArchs.begin(), kFamilyArchs.end(), [&](const char* a) {
                        return std::string(a) == arch;
                      }) != kFamilyArchs.end();
  std::map<std::string, KernelKey> keys;
  // HCA widths at 16K, 128K and 1M context: the tile walk, the segment count and the
  // registers of whole-row folding differ with the width (a spill was seen only at 16K).
  for (const int max_context : {16384, kMaxContext, 1048576}) {
    if (max_context != kMaxContext && !family) continue;
    for (const std::string& preset : preset_names()) {
      for (const smla_problem& problem : preset_problems(preset, max_context)) {
        add_kernels(problem, {arch}, &keys);
      }
    }
  }
  // 8 presets: over 100 distinct kernels at one context (layers of equal shapes and MTP
  // problems share theirs), plus the HCA kernels of the other two contexts.
  EXPECT_GE(compile_and_check(std::string("presets on ") + arch, keys), 100u);
}

INSTANTIATE_TEST_SUITE_P(EveryArch, PresetKernelsCompile, ::testing::ValuesIn(kArchs),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

class OtherLayoutsCompile : public ::testing::TestWithParam<const char*> {};

TEST_P(OtherLayoutsCompile, AndFp8Queries) {
  const std::string arch = GetParam();
  std::map<std::string, KernelKey> keys;
  if (arch == "sm_120a") {
    // e4m3 scores on the consumer parts, where more than 16 heads run 16-head entries-on-M
    // CTAs.
    for (smla_problem problem : preset_problems("dsv4-pro-tp2")) {
      problem.kv_layout = SMLA_KV_FP8_UNIFORM;
      problem.q_dtype = SMLA_FP8_E4M3;
      add_kernels(problem, {"sm_120a"}, &keys);
    }
    EXPECT_GT(compile_and_check("fp8 q on " + arch, keys), 0u);
    return;
  }
  struct Variant {
    smla_kv_layout layout;
    smla_dtype q_dtype;
  };
  // Each differs from the presets' packed KV and bf16 q in one place (q and KV are loaded by
  // separate code, so the crossed combinations add compile time, not coverage), but uniform KV
  // with fp8 q, whose scores are a code path of their own.
  constexpr Variant kVariants[] = {{SMLA_KV_FP8_UNIFORM, SMLA_BF16},
                                   {SMLA_KV_BF16, SMLA_BF16},
                                   {SMLA_KV_FP8_PACKED, SMLA_FP8_E4M3},
                                   // Q.K as e4m3 MMAs (the only pair that runs them)
                                   {SMLA_KV_FP8_UNIFORM, SMLA_FP8_E4M3}};
  // 8 heads (16 per CTA, a partial head group) and 64 heads (32 per CTA, two groups).
  for (const char* preset : {"dsv4-flash-tp8", "dsv4-pro-tp2"}) {
    for (smla_problem problem : preset_problems(preset)) {
      for (const Variant& variant : kVariants) {
        problem.kv_layout = variant.layout;
        problem.q_dtype = variant.q_dtype;
        add_kernels(problem, {arch.c_str()}, &keys);
      }
    }
  }
  // The heads-on-M kernel's e4m3 scores (uniform KV, fp8 q) at 32 heads, one group (it spilled on
  // sm_100a), and at 24, a partial group (it spilled on sm_90a): decode_heads_m_kernel.cuh.
  for (smla_problem problem : preset_problems("dsv4-pro-tp4")) {
    problem.kv_layout = SMLA_KV_FP8_UNIFORM;
    problem.q_dtype = SMLA_FP8_E4M3;
    for (const int heads : {32, 24}) {
      problem.num_heads = heads;
      add_kernels(problem, {arch.c_str()}, &keys);
    }
  }
  EXPECT_GT(compile_and_check("layouts and fp8 q on " + arch, keys), 0u);
}

INSTANTIATE_TEST_SUITE_P(OneArchOfEachFamily, OtherLayoutsCompile,
                         ::testing::Values("sm_90a", "sm_100a", "sm_120a"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

class StructuredSourcesCompile : public ::testing::TestWithParam<const char*> {};

// Window and prefix sources change only how a row finds its entries, on every kernel path: the
// HCA layer as a window and a ratio-128 prefix at 16 heads (entries-on-M) and 128 (heads-on-M,
// and wgmma on sm_90a), and CSA's window beside its top-k list at 64 heads.
TEST_P(StructuredSourcesCompile, WindowAndPrefix) {
  const std::string arch = GetParam();
  std::map<std::string, KernelKey> keys;
  for (const int heads : {16, 128}) {
    add_kernels(test::dsv4_structured_problem(heads, 2, 1024, 128), {arch.c_str()}, &keys);
  }
  add_kernels(test::dsv4_structured_problem(64, 64, 512, 0), {arch.c_str()}, &keys);
  EXPECT_GT(compile_and_check("structured sources on " + arch, keys), 0u);
}

INSTANTIATE_TEST_SUITE_P(EveryArch, StructuredSourcesCompile, ::testing::ValuesIn(kArchs),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

// The codegen, autotune and runtime tests cannot link tools/, so they check "every preset
// problem" on shapes written from docs/semantics.md (cpu/codegen/dsv4_problems.h); this keeps that
// copy equal to the presets.
TEST(PresetProblems, LowerLayerTestsUseThePresetProblems) {
  std::map<std::string, std::string> presets, copies;
  for (const std::string& preset : preset_names()) {
    Deployment deployment;
    ASSERT_TRUE(preset_deployment(preset, kMaxContext, &deployment));
    for (const auto& [name, problem] : deployment.problems()) {
      presets[preset + "/" + name] = problem_text(problem);
    }
  }
  for (const test::NamedProblem& named : test::dsv4_problems()) {
    copies[named.name] = problem_text(named.problem);
  }
  EXPECT_EQ(copies, presets);
}

}  // namespace
}  // namespace smla::tools
