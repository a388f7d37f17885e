// Validation runs on every smla_decode call, before anything else: a call that passes must not
// touch the heap (field names go into messages only when one is reported). The test counts this
// binary's operator new calls around the checks of valid calls of every layout, q dtype and
// source count, and checks that a failing one does allocate its message (so the count works).
#include <atomic>
#include <cstdlib>
#include <new>

#include "validate_fixture.h"

namespace {

std::atomic<bool> counting{false};
std::atomic<long> allocations{0};

}  // namespace

// Replacements for this test binary: count, then allocate as the default does.
void* operator new(std::size_t bytes) {
  if (counting.load()) allocations.fetch_add(1);
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace smla::validate_test {
namespace {

// The heap allocations `check` makes.
template <typename Check>
long allocations_of(Check&& check) {
  allocations = 0;
  counting = true;
  check();
  counting = false;
  return allocations.load();
}

TEST(ValidateAllocations, AValidCallAllocatesNothing) {
  for (const smla_kv_layout layout : {SMLA_KV_FP8_UNIFORM, SMLA_KV_FP8_PACKED, SMLA_KV_BF16}) {
    for (const smla_dtype q_dtype : {SMLA_BF16, SMLA_FP8_E4M3}) {
      for (const int sources : {1, 2}) {
        smla_problem problem = valid_problem();
        problem.kv_layout = layout;
        problem.q_dtype = q_dtype;
        problem.num_sources = sources;
        const Call call(problem, 64);
        SCOPED_TRACE(::testing::Message() << layout << " " << q_dtype << " " << sources);
        bool ok = false;
        const long count = allocations_of([&] {
          ok = validate_problem(&call.problem).is_ok() && call.validate().is_ok() &&
               validate_workspace(fake_pointer<void>(10), 4096).is_ok() &&
               validate_workspace_overlap(call.problem, call.args, fake_pointer<void>(10), 4096)
                   .is_ok();
        });
        EXPECT_TRUE(ok);
        EXPECT_EQ(count, 0);
      }
    }
  }
}

TEST(ValidateAllocations, AFailingCallAllocatesItsMessage) {
  Call call;
  call.args.sources[1].index_row_stride = 1;
  bool failed = false;
  EXPECT_GT(allocations_of([&] { failed = !call.validate().is_ok(); }), 0);
  EXPECT_TRUE(failed);
}

}  // namespace
}  // namespace smla::validate_test
