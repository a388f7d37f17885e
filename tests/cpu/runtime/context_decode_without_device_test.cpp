// smla_decode and smla_prefill on a context without a device validate every argument first (an
// invalid one is SMLA_ERR_INVALID_ARGUMENT, as on a GPU machine), then answer
// SMLA_ERR_NO_DEVICE for a valid call; an empty call (num_rows 0) is a no-op that succeeds.
#include <cstdlib>
#include <memory>
#include <string>

#include "context_fixture.h"

namespace smla::context_test {
namespace {

using ContextDecodeWithoutDevice = NoGpuContextTest;

// Host memory for every buffer of a call: validation checks presence, alignment and strides, and
// dereferences no device pointer, so host buffers pass it.
class HostBuffers {
 public:
  void* allocate(size_t bytes) {
    buffers_.emplace_back(std::aligned_alloc(256, (bytes + 255) / 256 * 256), &std::free);
    return buffers_.back().get();
  }

 private:
  std::vector<std::unique_ptr<void, decltype(&std::free)>> buffers_;
};

smla_args host_args(const smla_problem& problem, int rows, HostBuffers* host) {
  const int64_t heads = problem.num_heads;
  smla_args args{};
  args.num_rows = rows;
  args.q = host->allocate(rows * heads * SMLA_HEAD_DIM * 2);
  args.q_row_stride = heads * SMLA_HEAD_DIM;
  args.q_head_stride = SMLA_HEAD_DIM;
  args.q_scale = 1.0f;
  for (int s = 0; s < problem.num_sources; ++s) {
    const smla_source_desc& desc = problem.sources[s];
    smla_source_args& source = args.sources[s];
    source.page_stride_bytes = smla_min_page_stride(problem.kv_layout, desc.page_size);
    source.num_pages = 4;
    source.cache = host->allocate(source.num_pages * source.page_stride_bytes);
    source.index_row_stride = desc.width;
    source.indices = static_cast<const int32_t*>(host->allocate(rows * desc.width * 4));
    source.lengths = nullptr;
  }
  args.kv_scale = 1.0f;
  args.sink = static_cast<const float*>(host->allocate(heads * 4));
  args.softmax_scale = 0.044194173f;  // 1/sqrt(512)
  args.out = host->allocate(rows * heads * SMLA_HEAD_DIM * 2);
  args.out_row_stride = heads * SMLA_HEAD_DIM;
  args.out_head_stride = SMLA_HEAD_DIM;
  return args;
}

void expect_status(smla_status actual, smla_status expected, const std::string& in_message) {
  EXPECT_EQ(actual, expected) << smla_last_error();
  EXPECT_NE(std::string(smla_last_error()).find(in_message), std::string::npos)
      << smla_last_error();
}

TEST_F(ContextDecodeWithoutDevice, ValidatesThenReportsNoDevice) {
  const smla_options options = compile_only_options("");
  ContextPtr context = create_context(&options);
  ASSERT_NE(context, nullptr);
  const smla_problem problem = split_problem();
  HostBuffers host;
  const smla_args args = host_args(problem, 4, &host);
  const int32_t cu_seqlens_q[] = {0, 1, 4};
  const int32_t kv_lens[] = {100, 300};
  const smla_varlen varlen{2, cu_seqlens_q, kv_lens, nullptr, nullptr};
  {
    SCOPED_TRACE("a valid call");
    expect_status(smla_decode(context.get(), &problem, &args, nullptr, nullptr, 0, nullptr),
                  SMLA_ERR_NO_DEVICE, "no GPU");
    expect_status(smla_prefill(context.get(), &problem, &args, &varlen, nullptr, 0, nullptr),
                  SMLA_ERR_NO_DEVICE, "no GPU");
  }
  {
    SCOPED_TRACE("an empty call");
    smla_args empty = args;
    empty.num_rows = 0;
    EXPECT_EQ(smla_decode(context.get(), &problem, &empty, nullptr, nullptr, 0, nullptr), SMLA_OK)
        << smla_last_error();
  }
  {
    SCOPED_TRACE("invalid arguments are reported, not NO_DEVICE");
    smla_args bad = args;
    bad.q = nullptr;
    expect_status(smla_decode(context.get(), &problem, &bad, nullptr, nullptr, 0, nullptr),
                  SMLA_ERR_INVALID_ARGUMENT, "args.q");
    bad = args;
    bad.out = static_cast<char*>(args.out) + 2;
    expect_status(smla_decode(context.get(), &problem, &bad, nullptr, nullptr, 0, nullptr),
                  SMLA_ERR_INVALID_ARGUMENT, "args.out");
    bad = args;
    bad.sources[1].index_row_stride = problem.sources[1].width - 1;
    expect_status(smla_decode(context.get(), &problem, &bad, nullptr, nullptr, 0, nullptr),
                  SMLA_ERR_INVALID_ARGUMENT, "index_row_stride");
    expect_status(smla_decode(context.get(), &problem, &args, nullptr, nullptr, 64, nullptr),
                  SMLA_ERR_INVALID_ARGUMENT, "workspace");
    smla_problem bad_problem = problem;
    bad_problem.num_heads = 129;
    expect_status(smla_decode(context.get(), &bad_problem, &args, nullptr, nullptr, 0, nullptr),
                  SMLA_ERR_INVALID_ARGUMENT, "num_heads = 129");
    const int32_t short_seqlens[] = {0, 1, 3};
    const smla_varlen bad_varlen{2, short_seqlens, kv_lens, nullptr, nullptr};
    expect_status(smla_prefill(context.get(), &problem, &args, &bad_varlen, nullptr, 0, nullptr),
                  SMLA_ERR_INVALID_ARGUMENT, "cu_seqlens_q");
  }
}

}  // namespace
}  // namespace smla::context_test
