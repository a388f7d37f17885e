// Tuning rows on the device: a context whose cache holds rows for this GPU runs each bucket's
// tuned tile, alone (its planned calls say so), against the CPU reference. In batch-invariant
// mode (rows of tiles that keep a row's bits only) every output bit equals an untuned context's;
// in batch-variant mode a tuned tile with other segments changes the tuned buckets' bits and
// only theirs; a row whose kernel cannot be loaded leaves its bucket to the heuristic. The rows
// go into a scratch cache (the round's cache serves the kernels as a system cache; prewarm mode
// puts the tuned tiles' there), so no other test sees them.
#include <string>
#include <vector>

#include "autotune/tuning.h"
#include "gpu_env.h"
#include "runtime/context.h"
#include "support/scoped_env.h"
#include "support/scratch.h"

namespace smla::gpu_test {
namespace {

struct TunedRowSpec {
  int bucket;
  std::string tile;
};

class DecodeTuned : public ::testing::Test {
 protected:
  void SetUp() override { SMLA_REQUIRE_GPU(); }
  void TearDown() override {
    if (tuned_) smla_context_destroy(tuned_);
    if (untuned_) smla_context_destroy(untuned_);
  }

  // In prewarm mode: prepares `problem` and each row's tile (forced) into the round's cache and
  // returns true; the caller returns.
  static bool prewarmed_tiles(const smla_problem& problem, const std::vector<TunedRowSpec>& rows) {
    if (!prewarmed(problem)) return false;
    for (const TunedRowSpec& r : rows) {
      const ScopedEnv forced("SMLA_TILE", r.tile.c_str());
      smla_context* ctx = create_context();
      if (ctx != nullptr) prewarmed(problem, ctx);
      smla_context_destroy(ctx);
    }
    return true;
  }

  // Stores `rows` for `problem` in a scratch cache for this device and creates the tuned and
  // untuned contexts of the mode.
  void make_contexts(const smla_problem& problem, bool batch_variant,
                     const std::vector<TunedRowSpec>& rows) {
    DeviceInfo device;
    ASSERT_TRUE(GpuEnv::get().session->info(&device));
    const std::string cache = dir_.file("tuned.sqlite");
    {
      const Logger log(SMLA_LOG_ERROR);
      CubinStore::Options options;
      options.path = cache;
      const std::unique_ptr<CubinStore> store = CubinStore::open(options, log);
      ASSERT_TRUE(store->persistent());
      for (const TunedRowSpec& r : rows) {
        TuningRow row;
        row.problem_id = tuning_problem_id(problem, batch_variant);
        row.batch_bucket = r.bucket;
        row.device_name = device.name;
        row.sm_count = device.sm_count;
        row.driver_version = device.driver_version;
        row.config_text = r.tile;
        ASSERT_TRUE(store->put_tuning(row));
      }
    }
    const char* round_cache = std::getenv("SMLA_CACHE");
    const ScopedEnv system("SMLA_SYSTEM_CACHE", round_cache);
    const ScopedEnv user("SMLA_CACHE", cache.c_str());
    const ScopedEnv mode("SMLA_BATCH_VARIANT", batch_variant ? "1" : "0");
    {
      const ScopedEnv on("SMLA_TUNING", "1");
      tuned_ = create_context();
    }
    const ScopedEnv off("SMLA_TUNING", "0");
    untuned_ = create_context();
    ASSERT_NE(tuned_, nullptr);
    ASSERT_NE(untuned_, nullptr);
  }

  // A call of `rows` rows runs `tile` (a tuning row's) in the tuned context, or (nullptr) the
  // heuristic; never a tuning row in the untuned one.
  void expect_runs(const smla_problem& problem, int rows, const char* tile) {
    SCOPED_TRACE(rows);
    size_t bytes = 0;
    ASSERT_EQ(smla_prepare(tuned_, &problem, rows, &bytes), SMLA_OK) << smla_last_error();
    ASSERT_EQ(smla_prepare(untuned_, &problem, rows, &bytes), SMLA_OK) << smla_last_error();
    const DecodePlan* tuned = context_of(tuned_)->plan(problem);
    const DecodePlan* untuned = context_of(untuned_)->plan(problem);
    ASSERT_TRUE(tuned && untuned);
    const auto runs = [&](const DecodePlan& plan) -> const PlannedKernel& {
      return plan.kernels()[plan.call(rows, plan.workspace_bytes(rows)).kernel];
    };
    EXPECT_NE(runs(*untuned).role, KernelRole::kTuned);
    if (tile == nullptr) {
      EXPECT_NE(runs(*tuned).role, KernelRole::kTuned) << runs(*tuned).decode.tile.text();
    } else {
      ASSERT_EQ(runs(*tuned).role, KernelRole::kTuned);
      EXPECT_EQ(runs(*tuned).decode.tile.text(), tile);
    }
  }

  // One random case in both contexts, each against the reference; whether their bits agree.
  bool same_bits(const smla_problem& problem, int rows, uint64_t seed, const char* what) {
    const ref::CaseSpec spec = spec_for(problem, rows, seed);
    const CheckResult tuned = check_case(spec, what, {}, tuned_);
    const CheckResult untuned = check_case(spec, what, {}, untuned_);
    EXPECT_TRUE(tuned.status && untuned.status);
    EXPECT_FALSE(tuned.out.empty());
    return tuned.out == untuned.out && tuned.lse == untuned.lse;
  }

  test::TempDir dir_;
  smla_context* tuned_ = nullptr;
  smla_context* untuned_ = nullptr;
};

TEST_F(DecodeTuned, InvariantRowsKeepEveryBit) {
  const smla_problem p =
      make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 1024}});
  const std::vector<TunedRowSpec> rows = {{1, "hg8.w8.te32.st3.seg4.mb2.mma_sync"},
                                          {64, "hg16.w8.te32.st4.seg4.mb1.mma_sync"},
                                          {128, "hg8.w8.te32.st2.seg4.mb1.mma_sync"}};
  if (prewarmed_tiles(p, rows)) return;
  make_contexts(p, /*batch_variant=*/false, rows);
  expect_runs(p, 1, rows[0].tile.c_str());
  expect_runs(p, 3, nullptr);
  expect_runs(p, 64, rows[1].tile.c_str());
  expect_runs(p, 150, rows[2].tile.c_str());
  EXPECT_TRUE(same_bits(p, 1, 5000, "tuned bucket 1"));
  EXPECT_TRUE(same_bits(p, 3, 5001, "untuned bucket 2"));
  EXPECT_TRUE(same_bits(p, 64, 5002, "tuned bucket 64"));
  EXPECT_TRUE(same_bits(p, 150, 5003, "tuned bucket 128"));
}

TEST_F(DecodeTuned, VariantRowsRunTheTunedTile) {
  const smla_problem p =
      make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 2, {{256, 128}, {64, 1024}});
  // Whole rows in one segment at 4-7 rows, 8-head CTAs with 64-entry segments (other sums than
  // the heuristic's at every row count) at 128-255: other bits there, the same elsewhere.
  const std::vector<TunedRowSpec> rows = {{4, "hg16.w8.te32.st2.seg36.mb2.mma_sync"},
                                          {128, "hg8.w8.te32.st2.seg2.mb2.mma_sync"}};
  if (prewarmed_tiles(p, rows)) return;
  make_contexts(p, /*batch_variant=*/true, rows);
  expect_runs(p, 6, rows[0].tile.c_str());
  expect_runs(p, 2, nullptr);
  expect_runs(p, 130, rows[1].tile.c_str());
  expect_runs(p, 300, nullptr);
  EXPECT_FALSE(same_bits(p, 6, 5100, "tuned bucket 4"));
  EXPECT_TRUE(same_bits(p, 2, 5101, "untuned bucket 2"));
  EXPECT_FALSE(same_bits(p, 130, 5102, "tuned bucket 128"));
  EXPECT_TRUE(same_bits(p, 300, 5103, "untuned bucket 256"));
}

// A tuning row whose kernel is in no cache, in a context that may not compile (SMLA_JIT=0, as a
// server runs): smla_prepare still succeeds, warns once, and the heuristic serves the bucket.
TEST_F(DecodeTuned, ARowWhoseKernelIsMissingLeavesItsBucketToTheHeuristic) {
  const smla_problem p =
      make_problem(16, SMLA_KV_FP8_PACKED, SMLA_BF16, 1, {{256, 128}, {64, 1024}});
  if (prewarmed(p)) return;  // the row's own tile stays unbuilt
  const std::vector<TunedRowSpec> rows = {{8, "hg16.w8.te32.st3.seg4.mb1.mma_sync"}};
  {
    const ScopedEnv forbid("SMLA_JIT", "0");
    make_contexts(p, /*batch_variant=*/false, rows);
  }
  testing::internal::CaptureStderr();
  expect_runs(p, 8, nullptr);
  const std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_NE(warnings.find("tuned tile " + rows[0].tile), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("the heuristic serves them"), std::string::npos) << warnings;
  EXPECT_TRUE(same_bits(p, 8, 5200, "bucket 8, its tuned kernel missing"));
}

}  // namespace
}  // namespace smla::gpu_test
