// smla_prepare on a device: every kernel is loaded with the context current, and a load that
// fails undoes the loads before it and is reported, leaving the context usable.
#include <string>

#include "cpu/runtime/validate_fixture.h"
#include "fake_driver_fixture.h"

namespace smla::fake_driver_test {
namespace {

using Prepare = FakeDriverTest;
using validate_test::valid_problem;

TEST_F(Prepare, LoadsEveryKernelWithTheContextCurrentAndUnloadsThemWithIt) {
  std::unique_ptr<Context> context = create_context();
  ASSERT_NE(context, nullptr);
  size_t workspace = 0;
  ASSERT_TRUE(context->prepare(valid_problem(), 64, &workspace));
  EXPECT_GT(workspace, 0u);  // split calls: a combine kernel is loaded too
  // The decode and combine kernels of the default tile and of the narrow split.
  EXPECT_GE(fake_->modules_loaded, 4);
  EXPECT_EQ(calls("cuModuleGetFunction"), fake_->modules_loaded);
  EXPECT_EQ(fake_->calls_without_context, 0);
  const int loaded = fake_->modules_loaded;
  ASSERT_TRUE(context->prepare(valid_problem(), 64, &workspace));
  EXPECT_EQ(fake_->modules_loaded, loaded) << "a prepared problem is not loaded again";
  context.reset();
  EXPECT_EQ(fake_->modules_loaded, 0);
  EXPECT_EQ(fake_->primary_retained, 0);
}

TEST_F(Prepare, AFailedLoadUndoesTheLoadsBeforeItAndIsReported) {
  struct Failure {
    const char* call;
    CUresult result;
    const char* name;
  };
  for (const Failure& failure :
       {Failure{"cuModuleLoadData", CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE"},
        Failure{"cuModuleGetFunction", CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"},
        Failure{"cuFuncSetAttribute", CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"}}) {
    // The first kernel's call, then the next kernel's (the default tile's decode kernel is
    // loaded then).
    for (const int after : {0, 1}) {
      SCOPED_TRACE(std::string(failure.call) + " after " + std::to_string(after));
      std::unique_ptr<Context> context = create_context();
      ASSERT_NE(context, nullptr);
      fail(failure.call, failure.result, after);
      size_t workspace = 123;
      const Status status = context->prepare(valid_problem(), 64, &workspace);
      EXPECT_EQ(status.code(), SMLA_ERR_CUDA);
      EXPECT_EQ(status.message().find(failure.call), 0u) << status.message();
      EXPECT_NE(status.message().find(std::string(" failed: ") + failure.name), std::string::npos)
          << status.message();
      EXPECT_EQ(workspace, 123u);
      EXPECT_EQ(fake_->modules_loaded, 0) << "the kernels loaded before the failure stay loaded";
      // The driver recovers: the same context prepares the problem.
      fake_->fail_call.clear();
      EXPECT_TRUE(context->prepare(valid_problem(), 64, &workspace));
      EXPECT_GT(fake_->modules_loaded, 0);
      context.reset();
      EXPECT_EQ(fake_->modules_loaded, 0);
    }
  }
}

}  // namespace
}  // namespace smla::fake_driver_test
