// The bytes of the workspace a split call writes must not overlap any array the call reads or
// writes (validate_workspace_overlap, run by the launch once the plan's size is known): each
// array of the call is moved onto the workspace in turn, at its first and its last byte, and
// the message names it; arrays that only touch the used bytes, and a call that writes none, pass.
#include "cpu/runtime/validate_fixture.h"

namespace smla::validate_test {
namespace {

constexpr int64_t kUsed = 1 << 20;

// The workspace starts at byte `offset` of the array at `base` (negative: before it).
const void* workspace_at(const void* base, int64_t offset) {
  return reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(base) + offset);
}

TEST(ValidateWorkspaceOverlap, EveryArrayOfTheCallIsChecked) {
  const smla_problem problem = valid_problem();
  const smla_args args = valid_args(problem);
  const void* apart = fake_pointer<const void>(10);
  EXPECT_TRUE(IsOk(validate_workspace_overlap(problem, args, apart, kUsed)));
  const int64_t q_bytes = 4 * 16 * 512 * 2, out_bytes = q_bytes, lse_bytes = 4 * 16 * 4;
  const int64_t index_bytes[2] = {(3 * 128 + 128) * 4, (3 * 512 + 512) * 4};
  struct Case {
    const char* name;
    const void* base;
    int64_t bytes;
  };
  const Case cases[] = {
      {"args.q", args.q, q_bytes},
      {"args.out", args.out, out_bytes},
      {"args.lse", args.lse, lse_bytes},
      {"args.sink", args.sink, 16 * 4},
      {"args.sources[0].cache", args.sources[0].cache, 1000 * args.sources[0].page_stride_bytes},
      {"args.sources[0].indices", args.sources[0].indices, index_bytes[0]},
      {"args.sources[0].lengths", args.sources[0].lengths, 4 * 4},
      {"args.sources[1].cache", args.sources[1].cache, 1000 * args.sources[1].page_stride_bytes},
      {"args.sources[1].indices", args.sources[1].indices, index_bytes[1]},
      {"args.sources[1].lengths", args.sources[1].lengths, 4 * 4},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    // The used bytes end on the array's first byte, then start on its last one.
    EXPECT_TRUE(
        IsInvalid(validate_workspace_overlap(problem, args, workspace_at(c.base, 1 - kUsed), kUsed),
                  {"workspace = 0x", "1048576 bytes", c.name}));
    EXPECT_TRUE(IsInvalid(
        validate_workspace_overlap(problem, args, workspace_at(c.base, c.bytes - 1), kUsed),
        {c.name}));
    // Touching is not overlapping.
    EXPECT_TRUE(
        IsOk(validate_workspace_overlap(problem, args, workspace_at(c.base, -kUsed), kUsed)));
    EXPECT_TRUE(
        IsOk(validate_workspace_overlap(problem, args, workspace_at(c.base, c.bytes), kUsed)));
  }
}

TEST(ValidateWorkspaceOverlap, OnlyWhatTheCallUses) {
  smla_problem problem = valid_problem();
  smla_args args = valid_args(problem);
  // A call that writes no partials may share its workspace with anything.
  EXPECT_TRUE(IsOk(validate_workspace_overlap(problem, args, args.q, 0)));
  // Arrays the problem does not use, and a source without pages, are not the call's.
  problem.want_lse = 0;
  problem.has_sink = 0;
  args.sources[1].num_pages = 0;
  args.sources[1].lengths = nullptr;
  for (const void* unused :
       {static_cast<const void*>(args.lse), static_cast<const void*>(args.sink),
        args.sources[1].cache, static_cast<const void*>(fake_pointer<const int32_t>(6))}) {
    EXPECT_TRUE(IsOk(validate_workspace_overlap(problem, args, unused, kUsed)));
  }
  // Strided q: its extent runs to the last row's last head.
  args.q_row_stride = 1 << 20;
  const int64_t q_bytes = (3 * (int64_t{1} << 20) + 15 * 512 + 512) * 2;
  EXPECT_TRUE(
      IsInvalid(validate_workspace_overlap(problem, args, workspace_at(args.q, q_bytes - 1), kUsed),
                {"args.q"}));
  EXPECT_TRUE(
      IsOk(validate_workspace_overlap(problem, args, workspace_at(args.q, q_bytes), kUsed)));
}

}  // namespace
}  // namespace smla::validate_test
