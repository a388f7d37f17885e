// Tuning rows on a device (the GPU tests check their results; these, which rows apply): a row
// measured on this device (its name, SM count and driver version) runs its tile for its bucket,
// launched as that tile's kernel; a row of another device, or any row with SMLA_TUNING=0, does
// not apply.
#include <string>

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

class DecodeTunedOnFake : public FakeDriverTest {
 protected:
  // A context whose cache (a scratch file, which its kernels are compiled into) holds one
  // tuning row for valid_problem()'s bucket kBucket, measured on a device of this name, SM
  // count and driver version.
  std::unique_ptr<Context> context_with_row(const std::string& device_name, int sm_count,
                                            int driver_version) {
    const std::string path = dir_.file(device_name + std::to_string(sm_count) +
                                       std::to_string(driver_version) + ".sqlite");
    {
      const Logger log(SMLA_LOG_ERROR);
      CubinStore::Options store_options;
      store_options.path = path;
      const std::unique_ptr<CubinStore> store = CubinStore::open(store_options, log);
      TuningRow row;
      row.problem_id = tuning_problem_id(valid_problem(), true);
      row.batch_bucket = kBucket;
      row.device_name = device_name;
      row.sm_count = sm_count;
      row.driver_version = driver_version;
      row.config_text = kTunedTile;
      EXPECT_TRUE(store->put_tuning(row));
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
    const Status status = context->decode(valid_problem(), valid_args(valid_problem(), rows),
                                          fake_pointer<void>(10), workspace_bytes, nullptr);
    EXPECT_TRUE(status) << status.message();
    return fake_->launches.empty() ? 0 : fake_->launches[0].shared_bytes;
  }

  test::TempDir dir_;
};

TEST_F(DecodeTunedOnFake, ARowOfThisDeviceRunsItsTileInItsBucket) {
  const auto tuned = TileConfig::parse(kTunedTile);
  ASSERT_TRUE(tuned.has_value());
  const unsigned tuned_bytes = static_cast<unsigned>(
      KernelKey::decode("sm_90a", valid_problem(), *tuned).geometry().smem_bytes);
  std::unique_ptr<Context> context = context_with_row("Fake GPU", 132, CUDA_VERSION);
  ASSERT_NE(context, nullptr);
  for (const int rows : {kBucket, 2 * kBucket - 1}) {
    SCOPED_TRACE(rows);
    EXPECT_EQ(decode_shared_bytes(context.get(), rows), tuned_bytes);
    const auto planned = context->planned_call(valid_problem(), rows);
    ASSERT_TRUE(planned && planned->tuned);
    EXPECT_EQ(planned->tuned->tile.text(), kTunedTile);
  }
  for (const int rows : {kBucket - 1, 2 * kBucket}) {
    SCOPED_TRACE(rows);
    EXPECT_NE(decode_shared_bytes(context.get(), rows), tuned_bytes);
    EXPECT_FALSE(context->planned_call(valid_problem(), rows)->tuned);
  }
}

TEST_F(DecodeTunedOnFake, RowsOfAnotherDeviceOrWithTuningOffDoNotApply) {
  struct Identity {
    const char* name;
    int sm_count;
    int driver_version;
  };
  for (const Identity& other : {Identity{"Other GPU", 132, CUDA_VERSION},
                                Identity{"Fake GPU", 114, CUDA_VERSION},
                                Identity{"Fake GPU", 132, CUDA_VERSION - 10}}) {
    SCOPED_TRACE(std::string(other.name) + " " + std::to_string(other.sm_count) + " " +
                 std::to_string(other.driver_version));
    std::unique_ptr<Context> context =
        context_with_row(other.name, other.sm_count, other.driver_version);
    ASSERT_NE(context, nullptr);
    decode_shared_bytes(context.get(), kBucket);
    EXPECT_FALSE(context->planned_call(valid_problem(), kBucket)->tuned);
  }
  const ScopedEnv off("SMLA_TUNING", "0");
  std::unique_ptr<Context> context = context_with_row("Fake GPU", 132, CUDA_VERSION);
  ASSERT_NE(context, nullptr);
  decode_shared_bytes(context.get(), kBucket);
  EXPECT_FALSE(context->planned_call(valid_problem(), kBucket)->tuned);
}

}  // namespace
}  // namespace smla::fake_driver_test
