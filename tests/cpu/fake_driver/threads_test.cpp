// One context shared by 16 threads (include/smla.h: prepare and decode may be called from any
// number of threads at once): each thread prepares its problems and makes 10^4 decode calls of
// changing row counts, some problems shared between threads, some its own; every launch is what
// the same calls launch on one thread, and nothing fails. Run under the TSan build to check it
// race-free (docs/design.md).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <thread>
#include <tuple>
#include <vector>

#include "cpu/runtime/validate_fixture.h"
#include "fake_driver_fixture.h"

namespace smla::fake_driver_test {
namespace {

using validate_test::fake_pointer;
using validate_test::valid_args;
using validate_test::valid_problem;

using Threads = FakeDriverTest;

constexpr int kThreads = 16;
constexpr int kCallsPerThread = 10000;
constexpr int kMaxRows = 64;

// A launch without what differs between runs (the module's load order).
using Signature = std::tuple<std::string, unsigned, unsigned, unsigned, unsigned, bool,
                             std::vector<unsigned char>>;

std::map<Signature, int> signatures(const std::vector<fake_cuda::Launch>& launches) {
  std::map<Signature, int> counts;
  for (const fake_cuda::Launch& l : launches) {
    ++counts[{l.function, l.grid, l.grid_y, l.block, l.shared_bytes, l.programmatic, l.params}];
  }
  return counts;
}

// Thread t's problems: the shared one, and one of its own head count.
std::vector<smla_problem> problems_of(int t) {
  smla_problem own = valid_problem();
  own.num_heads = 1 + t % 8;
  return {valid_problem(), own};
}

// Thread t's calls: prepares, then kCallsPerThread decodes over its problems and row counts.
Status run_thread(Context& context, int t) {
  const std::vector<smla_problem> problems = problems_of(t);
  size_t workspace = 0;
  for (const smla_problem& p : problems) {
    size_t bytes = 0;
    SMLA_TRY(context.prepare(p, kMaxRows, &bytes));
    workspace = std::max(workspace, bytes);
  }
  for (int i = 0; i < kCallsPerThread; ++i) {
    const smla_problem& p = problems[i % problems.size()];
    const int rows = 1 + (i * 7 + t) % kMaxRows;
    SMLA_TRY(context.decode(p, valid_args(p, rows), nullptr, fake_pointer<void>(10), workspace,
                            nullptr));
  }
  return ok_status();
}

TEST_F(Threads, ManyThreadsOnOneContextLaunchWhatOneThreadLaunches) {
  fake_->param_bytes = 64;  // the call's leading parameters: rows, split, prefix, folds, q
  std::map<Signature, int> expected;
  {
    std::unique_ptr<Context> context = create_context();
    ASSERT_NE(context, nullptr);
    for (int t = 0; t < kThreads; ++t) ASSERT_TRUE(run_thread(*context, t));
    expected = signatures(fake_->launches);
  }
  fake_->launches.clear();
  std::unique_ptr<Context> context = create_context();
  ASSERT_NE(context, nullptr);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      if (!run_thread(*context, t)) ++failures;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  const std::map<Signature, int> got = signatures(fake_->launches);
  EXPECT_EQ(got.size(), expected.size());
  EXPECT_TRUE(got == expected) << "the launches of 16 threads differ from one thread's";
  size_t launches = 0;
  for (const auto& [signature, count] : got) launches += static_cast<size_t>(count);
  EXPECT_GE(launches, static_cast<size_t>(kThreads) * kCallsPerThread);
}

}  // namespace
}  // namespace smla::fake_driver_test
