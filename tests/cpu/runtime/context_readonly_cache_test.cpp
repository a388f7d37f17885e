// A cache file prewarmed by another user (root, when an image is built) serves a JIT-forbidden
// context of a user who may only read it: prepare finds every kernel in the file and changes
// nothing in it. The context runs in a child that has become `nobody`, since root ignores
// permission bits.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "context_fixture.h"
#include "support/scratch.h"

namespace smla::context_test {
namespace {

using ContextReadOnlyCache = NoGpuContextTest;

TEST_F(ContextReadOnlyCache, ServesAJitForbiddenContextOfAnotherUser) {
  TempDir dir;
  const std::string cache = dir.file("cache.sqlite");
  const smla_problem problem = split_problem();
  {
    const smla_options options = compile_only_options(cache.c_str(), SMLA_JIT_ALLOW);
    ContextPtr context = create_context(&options);
    ASSERT_NE(context, nullptr);
    size_t workspace = 0;
    ASSERT_EQ(smla_prepare(context.get(), &problem, 256, &workspace), SMLA_OK)
        << smla_last_error();
  }
  ASSERT_EQ(chmod(cache.c_str(), 0444), 0);
  const std::string before = test::read_file_bytes(cache);

  std::fflush(nullptr);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (!test::become_nobody_if_root()) _exit(3);
    smla_options options = compile_only_options(cache.c_str(), SMLA_JIT_FORBID);
    options.log_level = SMLA_LOG_ERROR;
    smla_context* context = nullptr;
    if (smla_context_create(&options, &context) != SMLA_OK) _exit(2);
    size_t workspace = 0;
    const smla_status status = smla_prepare(context, &problem, 256, &workspace);
    if (status != SMLA_OK) std::fprintf(stderr, "%s\n", smla_last_error());
    smla_context_destroy(context);
    _exit(status == SMLA_OK ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the read-only file's kernels were not found";
  EXPECT_EQ(test::read_file_bytes(cache), before);
}

}  // namespace
}  // namespace smla::context_test
