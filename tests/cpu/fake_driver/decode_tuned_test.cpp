// Tuning rows on a device (the GPU tests check their results; these, which rows apply): a row
// measured on this device (its name, SM count and driver version) runs its tile for its bucket,
// launched as that tile's kernel; a row of another device, or any row with SMLA_TUNING=0, does
// not apply.
#include <string>
#include <vector>

#include "autotune/tuning.h"
#include "codegen/kernel_key.h"
#include "cpu/runtime/validate_fixture.h"
#include "fake_driver_fixture.h"
#include "support/scratch.h"

namespace smla::fake_driver_test {
namespace {

using validate_test::fake_pointer;
using validate_test::valid_args;
using validate_test::valid_problem;

constexpr int kBucket = 64;
// Three stages instead of the heuristic's two: another kernel, with more shared memory.
constexpr const char* kTunedTile = "hg16.w8.te32.st3.seg4.mb1.mma_sync";

struct DeviceIdentity {
  std::string name;
  int sm_count;
  int driver_version;
};

const DeviceIdentity kThisDevice{fake_cuda::kDeviceName, fake_cuda::kSmCount, CUDA_VERSION};

class DecodeTunedOnFake : public FakeDriverTest {
 protected:
  // A context whose cache (a scratch file, which its kernels are compiled into) holds a tuning
  // row of kTunedTile for valid_problem()'s bucket kBucket per device identity.
  std::unique_ptr<Context> context_with_rows(const std::vector<DeviceIdentity>& devices) {
    const std::string path = dir_.file("cache" + std::to_string(++caches_) + ".sqlite");
    {
      const Logger log(SMLA_LOG_ERROR);
      CubinStore::Options store_options;
      store_options.path = path;
      const std::unique_ptr<CubinStore> store = CubinStore::open(store_options, log);
      for (const DeviceIdentity& device : devices) {
        TuningRow row;
        row.problem_id = tuning_problem_id(valid_problem(), /*batch_variant=*/false);
        row.batch_bucket = kBucket;
        row.device_name = device.name;
        row.sm_count = device.sm_count;
        row.driver_version = device.driver_version;
        row.config_text = kTunedTile;
        EXPECT_TRUE(store->put_tuning(row));
      }
    }
    smla_options o = options();
    o.cache_path = path.c_str();
    std::unique_ptr<Context> context;
    const Status status = Context::create(&o, &context);
    EXPECT_TRUE(status) << status.message();
    return context;
  }

  // Launches a call of `rows` rows; the shared memory of its decode kernel.
  unsigned decode_shared_bytes(Context* context, int rows) {
    size_t workspace_bytes = 0;
    EXPECT_TRUE(context->prepare(valid_problem(), rows, &workspace_bytes));
    fake_->launches.clear();
    const Status status =
        context->decode(valid_problem(), valid_args(valid_problem(), rows), nullptr,
                        fake_pointer<void>(10), workspace_bytes, nullptr);
    EXPECT_TRUE(status) << status.message();
    return fake_->launches.empty() ? 0 : fake_->launches[0].shared_bytes;
  }

  // Whether a call of `rows` rows runs a tuning row's tile (the test fails if it runs another).
  static bool runs_tuned_tile(const Context& context, int rows) {
    const DecodePlan* plan = context.plan(valid_problem());
    EXPECT_NE(plan, nullptr);
    if (plan == nullptr) return false;
    const PlannedKernel& kernel =
        plan->kernels()[plan->call(rows, plan->workspace_bytes(rows)).kernel];
    if (kernel.role != KernelRole::kTuned) return false;
    EXPECT_EQ(kernel.decode.tile.text(), kTunedTile);
    EXPECT_EQ(kernel.tuned_bucket, kBucket);
    return true;
  }

  static unsigned tuned_shared_bytes() {
    const std::optional<TileConfig> tuned = TileConfig::parse(kTunedTile);
    EXPECT_TRUE(tuned.has_value());
    return static_cast<unsigned>(
        DecodeKernel::of(*find_arch("sm_90a"), valid_problem(), tuned.value_or(TileConfig{}))
            .geometry()
            .smem_bytes);
  }

  test::TempDir dir_;
  int caches_ = 0;
};

TEST_F(DecodeTunedOnFake, ARowOfThisDeviceRunsItsTileInItsBucket) {
  std::unique_ptr<Context> context = context_with_rows({kThisDevice});
  ASSERT_NE(context, nullptr);
  for (const int rows : {kBucket, 2 * kBucket - 1}) {
    SCOPED_TRACE(rows);
    EXPECT_EQ(decode_shared_bytes(context.get(), rows), tuned_shared_bytes());
    EXPECT_TRUE(runs_tuned_tile(*context, rows));
  }
  for (const int rows : {kBucket - 1, 2 * kBucket}) {
    SCOPED_TRACE(rows);
    EXPECT_NE(decode_shared_bytes(context.get(), rows), tuned_shared_bytes());
    EXPECT_FALSE(runs_tuned_tile(*context, rows));
  }
}

TEST_F(DecodeTunedOnFake, RowsOfAnotherDeviceOrWithTuningOffDoNotApply) {
  {
    SCOPED_TRACE("another name, SM count or driver version");
    std::unique_ptr<Context> context = context_with_rows(
        {{"Other GPU", kThisDevice.sm_count, kThisDevice.driver_version},
         {kThisDevice.name, kThisDevice.sm_count - 18, kThisDevice.driver_version},
         {kThisDevice.name, kThisDevice.sm_count, kThisDevice.driver_version - 10}});
    ASSERT_NE(context, nullptr);
    EXPECT_NE(decode_shared_bytes(context.get(), kBucket), tuned_shared_bytes());
    EXPECT_FALSE(runs_tuned_tile(*context, kBucket));
  }
  {
    SCOPED_TRACE("SMLA_TUNING=0");
    const ScopedEnv off("SMLA_TUNING", "0");
    std::unique_ptr<Context> context = context_with_rows({kThisDevice});
    ASSERT_NE(context, nullptr);
    EXPECT_NE(decode_shared_bytes(context.get(), kBucket), tuned_shared_bytes());
    EXPECT_FALSE(runs_tuned_tile(*context, kBucket));
  }
}

}  // namespace
}  // namespace smla::fake_driver_test
