// Writes fuzz_api_validation's seed corpus (fuzz/corpus/fuzz_api_validation): valid calls of
// DeepSeek-V4 problems on the fuzzer's contexts, one file each, encoded by api_input.h.
//   fuzz_api_seeds DIR
#include <smla.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "api_input.h"
#include "cpu/codegen/dsv4_problems.h"

namespace smla::fuzz {
namespace {

// The fuzzer's contexts in order (fuzz_api_validation.cpp): no arch, then sm_90a, sm_100a,
// sm_103a, sm_120a and sm_121a, each batch-invariant then batch-variant.
int context_index(int arch, bool batch_variant) { return 2 * arch + (batch_variant ? 1 : 0); }

FakePointer buffer(int slot) { return {1, static_cast<uint8_t>(slot), 0}; }

// Contiguous q and out, minimal page strides, tight index tables with per-row lengths, one
// buffer each (api_input.h's slots), and `rows` rows split into `requests` equal requests.
ApiInput valid_call(int context, const smla_problem& problem, int rows, int requests) {
  ApiInput in;
  in.context = static_cast<uint8_t>(context);
  in.problem = problem;
  in.max_rows = rows > 0 ? rows : 1;
  ArgsInput& a = in.args;
  a.num_rows = rows;
  const int64_t vector_elems = SMLA_HEAD_DIM;
  a.q = buffer(0);
  a.q_head_stride = vector_elems;
  a.q_row_stride = problem.num_heads * vector_elems;
  a.q_scale = 1.0f;
  for (int s = 0; s < problem.num_sources; ++s) {
    SourceInput& source = a.sources[s];
    source.cache = buffer(1 + 3 * s);
    source.page_stride_bytes =
        smla_min_page_stride(problem.kv_layout, problem.sources[s].page_size);
    source.num_pages = 64;
    source.indices = buffer(2 + 3 * s);
    source.index_row_stride = problem.sources[s].width;
    source.lengths = buffer(3 + 3 * s);
  }
  a.kv_scale = 1.0f;
  if (problem.has_sink) a.sink = buffer(7);
  a.softmax_scale = 0.044194173f;  // 1/sqrt(512)
  a.out = buffer(8);
  a.out_head_stride = vector_elems;
  a.out_row_stride = problem.num_heads * vector_elems;
  if (problem.want_lse) a.lse = buffer(9);
  VarlenInput& v = in.varlen;
  v.num_requests = requests;
  v.cu_seqlens_q = {1, 0};
  v.kv_lens = {1, 0};
  for (int r = 0; r <= requests; ++r) v.cu_values.push_back(requests ? rows * r / requests : 0);
  for (int r = 0; r < requests; ++r) v.kv_values.push_back(128 + 1000 * r);
  return in;
}

struct Seed {
  const char* name;
  ApiInput input;
};

std::vector<Seed> seeds() {
  using test::dsv4_compressed_problem;
  using test::dsv4_window_problem;
  std::vector<Seed> all;
  // DeepSeek-V4-Flash at TP 8, a sliding-window layer, on sm_90a.
  all.push_back(
      {"flash-tp8-swa-sm90a", valid_call(context_index(1, false), dsv4_window_problem(8), 4, 2)});
  // Flash at TP 4, CSA (top-k 512), batch-variant on sm_100a.
  all.push_back({"flash-tp4-csa-sm100a-variant",
                 valid_call(context_index(2, true), dsv4_compressed_problem(16, 64, 512), 64, 8)});
  // Pro at TP 1, HCA, fp8 q on the uniform layout with the lse, on sm_90a.
  smla_problem pro_hca = dsv4_compressed_problem(128, 2, 1024);
  pro_hca.q_dtype = SMLA_FP8_E4M3;
  pro_hca.kv_layout = SMLA_KV_FP8_UNIFORM;
  pro_hca.want_lse = 1;
  all.push_back(
      {"pro-tp1-hca-fp8-uniform-sm90a", valid_call(context_index(1, false), pro_hca, 1, 1)});
  // Pro at TP 8, CSA (top-k 1024), MTP q_len 2, on the context without an arch.
  smla_problem pro_mtp = dsv4_compressed_problem(16, 64, 1024);
  pro_mtp.q_len = 2;
  all.push_back({"pro-tp8-csa-mtp-noarch", valid_call(context_index(0, false), pro_mtp, 8, 4)});
  // Flash at TP 2, CSA on the bf16 layout, on sm_120a.
  smla_problem flash_bf16 = dsv4_compressed_problem(32, 64, 512);
  flash_bf16.kv_layout = SMLA_KV_BF16;
  all.push_back(
      {"flash-tp2-csa-bf16-sm120a", valid_call(context_index(4, false), flash_bf16, 3, 3)});
  // Flash at TP 1, HCA, with a workspace, batch-variant on sm_103a.
  ApiInput hca = valid_call(context_index(3, true), dsv4_compressed_problem(64, 2, 1024), 16, 2);
  hca.workspace = buffer(10);
  hca.workspace_bytes = uint64_t{1} << 20;
  all.push_back({"flash-tp1-hca-workspace-sm103a-variant", hca});
  // Pro at TP 8, HCA as a window and a ratio-128 prefix read through block tables, prefill of
  // two requests on sm_90a.
  ApiInput structured =
      valid_call(context_index(1, false), test::dsv4_structured_problem(16, 2, 1024, 128), 8, 2);
  for (SourceInput& source : structured.args.sources) {
    source.lengths = {};
    source.index_row_stride = 8;
  }
  structured.varlen.device_cu_seqlens_q = buffer(11);
  structured.varlen.device_kv_lens = buffer(12);
  all.push_back({"pro-tp8-hca-structured-sm90a", structured});
  // An empty batch: every field but num_rows is ignored.
  ApiInput empty = valid_call(context_index(5, false), dsv4_window_problem(64), 0, 0);
  all.push_back({"flash-tp1-swa-empty-sm121a", empty});
  return all;
}

}  // namespace
}  // namespace smla::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_api_seeds DIR\n");
    return 2;
  }
  for (smla::fuzz::Seed& seed : smla::fuzz::seeds()) {
    smla::fuzz::ByteWriter writer;
    smla::fuzz::io_call(writer, &seed.input);
    const std::string path = std::string(argv[1]) + "/" + seed.name;
    std::ofstream file(path, std::ios::binary);
    file.write(reinterpret_cast<const char*>(writer.bytes().data()),
               static_cast<std::streamsize>(writer.bytes().size()));
    if (!file) {
      std::fprintf(stderr, "fuzz_api_seeds: cannot write %s\n", path.c_str());
      return 1;
    }
  }
  return 0;
}
