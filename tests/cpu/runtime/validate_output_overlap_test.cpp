// What a call writes (out, and lse when the problem asks for it) must not overlap what it reads
// or the other output: in-place attention (out == q) or outputs carved from the KV pool would be
// read by CTAs after others wrote there. And no array's extent may run past the end of the
// address space, where the overlap arithmetic would wrap.
#include "cpu/runtime/validate_fixture.h"

namespace smla::validate_test {
namespace {

// `base` moved by `offset` bytes (negative: before it).
template <typename T>
T* moved(const void* base, int64_t offset) {
  return reinterpret_cast<T*>(reinterpret_cast<uintptr_t>(base) + offset);
}

TEST(ValidateOutputOverlap, OutputsMustNotLandOnAnythingTheCallUses) {
  const Call valid;
  ASSERT_TRUE(IsOk(valid.validate()));
  const smla_args& a = valid.args;
  const int64_t out_bytes = 4 * 16 * 512 * 2, lse_bytes = 4 * 16 * 4;
  struct Array {
    const char* name;
    const void* base;
    int64_t bytes;
  };
  const Array inputs[] = {
      {"args.q", a.q, out_bytes},
      {"args.sink", a.sink, 16 * 4},
      {"args.sources[0].cache", a.sources[0].cache, 1000 * a.sources[0].page_stride_bytes},
      {"args.sources[0].indices", a.sources[0].indices, (3 * 128 + 128) * 4},
      {"args.sources[0].lengths", a.sources[0].lengths, 4 * 4},
      {"args.sources[1].cache", a.sources[1].cache, 1000 * a.sources[1].page_stride_bytes},
      {"args.sources[1].indices", a.sources[1].indices, (3 * 512 + 512) * 4},
      {"args.sources[1].lengths", a.sources[1].lengths, 4 * 4},
      {"args.lse", a.lse, lse_bytes},
  };
  for (const Array& input : inputs) {
    SCOPED_TRACE(input.name);
    // out (16-byte aligned) ends on the array's first 16 bytes, then starts on its last ones;
    // touching is fine.
    Call call = valid;
    call.args.out = moved<void>(input.base, 16 - out_bytes);
    EXPECT_TRUE(IsInvalid(call.validate(), {"args.out = 0x", "overlap", input.name}));
    call.args.out = moved<void>(input.base, (input.bytes - 1) / 16 * 16);
    EXPECT_TRUE(IsInvalid(call.validate(), {"args.out", input.name}));
    call.args.out = moved<void>(input.base, -out_bytes);
    EXPECT_TRUE(IsOk(call.validate()));
    call.args.out = moved<void>(input.base, input.bytes);
    EXPECT_TRUE(IsOk(call.validate()));
    if (input.base == a.lse) continue;
    call = valid;
    call.args.lse = moved<float>(input.base, input.bytes - 4);
    EXPECT_TRUE(IsInvalid(call.validate(), {"args.lse", input.name}));
  }
}

TEST(ValidateOutputOverlap, InPlaceAndUnusedArrays) {
  Call in_place;
  in_place.args.out = const_cast<void*>(in_place.args.q);
  EXPECT_TRUE(IsInvalid(in_place.validate(), {"args.out", "overlap args.q"}));
  // An lse the problem does not ask for is not written, so it may be anything.
  smla_problem no_lse = valid_problem();
  no_lse.want_lse = 0;
  Call call(no_lse);
  call.args.lse = static_cast<float*>(call.args.out);
  EXPECT_TRUE(IsOk(call.validate()));
}

// Pages may interleave in a pool (a stride above the page's bytes, as two sources or layers
// sharing one pool have): the cache ends with its last page's bytes, not with a stride.
TEST(ValidateOutputOverlap, TheCacheEndsWithItsLastPage) {
  Call call;
  smla_source_args& source = call.args.sources[1];
  const int64_t page_bytes = source.page_stride_bytes;
  source.page_stride_bytes = 2 * page_bytes;
  const int64_t end = (source.num_pages - 1) * source.page_stride_bytes + page_bytes;
  call.args.out = moved<void>(source.cache, end);
  EXPECT_TRUE(IsOk(call.validate()));
  call.args.out = moved<void>(source.cache, end - 16);
  EXPECT_TRUE(IsInvalid(call.validate(), {"args.out", "args.sources[1].cache"}));
}

TEST(ValidateOutputOverlap, NoExtentPastTheEndOfTheAddressSpace) {
  Call call;
  call.args.q = reinterpret_cast<const void*>(uintptr_t{0xfffffffffffff000});
  EXPECT_TRUE(IsInvalid(call.validate(),
                        {"args.q = 0xfffffffffffff000: its 65536 bytes run past the end of the "
                         "address space"}));
}

}  // namespace
}  // namespace smla::validate_test
