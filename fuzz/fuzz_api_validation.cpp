// libFuzzer target: the C API without a GPU (docs/fuzzing.md). An input decodes (api_input.h)
// into a problem, a call and a varlen description for one of the contexts below; smla_prepare,
// smla_decode and smla_prefill run on them. Checked: every status is one the call can return
// here; a rejection's message names a field of the call and the value it holds (api_fields.h);
// calls that validate the same arguments first reject them alike; and nothing reads memory it
// was not given (ASan, UBSan). A failed check aborts, so libFuzzer keeps the input.
#include <fmt/format.h>
#include <smla.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "api_fields.h"
#include "api_input.h"
#include "support/cleared_smla_environment.h"

namespace smla::fuzz {
namespace {

// A context without a device, with a memory-only cache and the JIT forbidden: without an arch
// prepare stops at NO_DEVICE; with one it plans the problem and stops at the first kernel that
// is in no cache (NOT_READY).
struct FuzzContext {
  smla_context* handle = nullptr;
  const char* arch = nullptr;
};

const char* const kArchs[] = {nullptr, "sm_90a", "sm_100a", "sm_103a", "sm_120a", "sm_121a"};

std::vector<FuzzContext> make_contexts() {
  std::vector<FuzzContext> made;
  for (const char* arch : kArchs) {
    for (int batch_variant : {0, 1}) {
      smla_options options;
      smla_options_init(&options);
      options.cache_path = "";
      options.jit = SMLA_JIT_FORBID;
      options.log_level = SMLA_LOG_ERROR;
      options.arch = arch;
      options.batch_variant = batch_variant;
      FuzzContext context{nullptr, arch};
      if (smla_context_create(&options, &context.handle) != SMLA_OK) {
        std::fprintf(stderr, "fuzz_api_validation: no context: %s\n", smla_last_error());
        std::abort();
      }
      made.push_back(context);
    }
  }
  return made;
}

const std::vector<FuzzContext>* g_contexts = nullptr;

struct Outcome {
  smla_status status = SMLA_OK;
  std::string message;  // smla_last_error() when the status is not SMLA_OK
  bool rejected() const {
    return status == SMLA_ERR_INVALID_ARGUMENT || status == SMLA_ERR_UNSUPPORTED;
  }
  // The root of the field a rejection names: "problem", "args", "varlen", "workspace", ...
  std::string root() const { return message.substr(0, message.find_first_of(".[ ")); }
  bool operator==(const Outcome& other) const {
    return status == other.status && message == other.message;
  }
};

Outcome outcome_of(smla_status status) {
  return {status, status == SMLA_OK ? std::string() : std::string(smla_last_error())};
}

// Ends the process with what failed, so that libFuzzer records the input.
[[noreturn]] void fail(const std::string& what, const Outcome& prepare, const Outcome& decode,
                       const Outcome& prefill) {
  std::fprintf(stderr,
               "fuzz_api_validation: %s\n  prepare: %s \"%s\"\n  decode:  %s \"%s\"\n"
               "  prefill: %s \"%s\"\n",
               what.c_str(), smla_status_string(prepare.status), prepare.message.c_str(),
               smla_status_string(decode.status), decode.message.c_str(),
               smla_status_string(prefill.status), prefill.message.c_str());
  std::abort();
}

// The decoded input as the C API takes it; the varlen arrays are real, of the documented sizes.
struct Call {
  explicit Call(const ApiInput& in) {
    problem = in.problem;
    const ArgsInput& a = in.args;
    args.num_rows = a.num_rows;
    args.q = a.q.address();
    args.q_row_stride = a.q_row_stride;
    args.q_head_stride = a.q_head_stride;
    args.q_scale = a.q_scale;
    for (int s = 0; s < SMLA_MAX_SOURCES; ++s) {
      const SourceInput& from = a.sources[s];
      smla_source_args& to = args.sources[s];
      to.cache = from.cache.address();
      to.page_stride_bytes = from.page_stride_bytes;
      to.num_pages = from.num_pages;
      to.indices = static_cast<const int32_t*>(from.indices.address());
      to.index_row_stride = from.index_row_stride;
      to.lengths = static_cast<const int32_t*>(from.lengths.address());
    }
    args.kv_scale = a.kv_scale;
    args.sink = static_cast<const float*>(a.sink.address());
    args.softmax_scale = a.softmax_scale;
    args.out = const_cast<void*>(a.out.address());
    args.out_row_stride = a.out_row_stride;
    args.out_head_stride = a.out_head_stride;
    args.lse = static_cast<float*>(const_cast<void*>(a.lse.address()));

    const VarlenInput& v = in.varlen;
    passed.cu_entries = v.cu_values.size();
    passed.kv_entries = v.kv_values.size();
    cu_seqlens.reset(new int32_t[passed.cu_entries]);  // new T[0] too is its own allocation
    kv_lens.reset(new int32_t[passed.kv_entries]);
    std::copy(v.cu_values.begin(), v.cu_values.end(), cu_seqlens.get());
    std::copy(v.kv_values.begin(), v.kv_values.end(), kv_lens.get());
    varlen.num_requests = v.num_requests;
    varlen.cu_seqlens_q = host_pointer(v.cu_seqlens_q, cu_seqlens.get());
    varlen.kv_lens = host_pointer(v.kv_lens, kv_lens.get());
    varlen.device_cu_seqlens_q = static_cast<const int32_t*>(v.device_cu_seqlens_q.address());
    varlen.device_kv_lens = static_cast<const int32_t*>(v.device_kv_lens.address());

    passed.problem = in.null_arguments & 1 ? nullptr : &problem;
    passed.max_rows = in.max_rows;
    passed.args = in.null_arguments & 2 ? nullptr : &args;
    passed.varlen = in.null_arguments & 4 ? nullptr : &varlen;
    passed.workspace = in.workspace.address();
    passed.workspace_bytes = static_cast<size_t>(in.workspace_bytes);
  }

  static const int32_t* host_pointer(const HostArray& array, const int32_t* data) {
    switch (array.kind % 3) {
      case 1:
        return data;
      case 2:  // misaligned: must be rejected before any read
        return reinterpret_cast<const int32_t*>(reinterpret_cast<uintptr_t>(data) + 1 +
                                                array.misalign % 3);
      default:
        return nullptr;
    }
  }

  smla_problem problem{};
  smla_args args{};
  smla_varlen varlen{};
  std::unique_ptr<int32_t[]> cu_seqlens, kv_lens;
  PassedCall passed;
};

// A rejection names a field of this call with its value; any other failure says something.
std::string message_problem(ApiCall api, const PassedCall& call, const Outcome& outcome) {
  if (outcome.status == SMLA_OK) return "";
  if (outcome.message.empty()) return "an empty smla_last_error()";
  if (!outcome.rejected()) return "";
  const std::string wrong = misnamed_fields(outcome.message, api, call);
  return wrong.empty() ? "" : "the message names no field of the call: " + wrong;
}

void check(const FuzzContext& context, const Call& call, const Outcome& prepare,
           const Outcome& decode, const Outcome& prefill) {
  const auto failed = [&](const std::string& what) { fail(what, prepare, decode, prefill); };
  const PassedCall& passed = call.passed;
  // The statuses each call can return without a device, with the JIT forbidden.
  if (!prepare.rejected()) {
    const bool expected =
        context.arch ? prepare.status == SMLA_ERR_NOT_READY : prepare.status == SMLA_ERR_NO_DEVICE;
    if (!expected) failed("prepare returned a status it cannot here");
    if (context.arch &&
        prepare.message.find(fmt::format(";arch={};", context.arch)) == std::string::npos) {
      failed("prepare's NOT_READY names no kernel of the context's arch");
    }
  }
  const int rows = passed.args ? passed.args->num_rows : 0;
  for (const Outcome* call_outcome : {&decode, &prefill}) {
    if (call_outcome->rejected()) continue;
    if (call_outcome->status == SMLA_OK && rows == 0) continue;
    if (call_outcome->status == SMLA_ERR_NO_DEVICE && rows > 0) continue;
    failed("decode or prefill returned a status it cannot here");
  }
  const struct {
    ApiCall api;
    const Outcome& outcome;
  } calls[] = {
      {ApiCall::kPrepare, prepare}, {ApiCall::kDecode, decode}, {ApiCall::kPrefill, prefill}};
  for (const auto& c : calls) {
    const std::string wrong = message_problem(c.api, passed, c.outcome);
    if (!wrong.empty()) failed(wrong);
  }
  // Every call validates the problem first, decode and prefill the args next: the same
  // arguments are rejected alike. Prefill validates the varlen description before the
  // workspace, so it may reject the varlen where decode rejected or passed the workspace.
  const bool problem_rejected = prepare.rejected() && prepare.root() == "problem";
  if (problem_rejected != (decode.rejected() && decode.root() == "problem")) {
    failed("prepare and decode disagree about the problem");
  }
  if (problem_rejected && !(decode == prepare && prefill == prepare)) {
    failed("the calls reject the same problem differently");
  }
  if (decode.rejected() && decode.root() == "args" && !(prefill == decode)) {
    failed("decode and prefill reject the same args differently");
  }
  const bool decode_passed_args = !decode.rejected() || decode.root() == "workspace";
  if (decode_passed_args && !(prefill == decode) &&
      !(prefill.rejected() && prefill.root() == "varlen")) {
    failed("prefill differs from decode other than by rejecting the varlen description");
  }
}

}  // namespace
}  // namespace smla::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  using namespace smla::fuzz;
  // No device even on a machine with a GPU (fake pointers must never reach a launch), and no
  // SMLA_* variable of the host changing what the contexts do.
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  static smla::test::ClearedSmlaEnvironment cleared;
  // Never destroyed: the contexts live until the process ends (the leak check runs after
  // static destructors, so contexts they freed would be reported as leaks).
  g_contexts = new std::vector<FuzzContext>(make_contexts());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace smla::fuzz;
  ApiInput in;
  ByteReader reader(data, size);
  io_call(reader, &in);
  const FuzzContext& context = (*g_contexts)[in.context % g_contexts->size()];
  const Call call(in);
  const PassedCall& p = call.passed;
  size_t workspace_bytes = 0;
  const Outcome prepare =
      outcome_of(smla_prepare(context.handle, p.problem, p.max_rows, &workspace_bytes));
  const Outcome decode =
      outcome_of(smla_decode(context.handle, p.problem, p.args, nullptr,
                             const_cast<void*>(p.workspace), p.workspace_bytes, nullptr));
  const Outcome prefill =
      outcome_of(smla_prefill(context.handle, p.problem, p.args, p.varlen,
                              const_cast<void*>(p.workspace), p.workspace_bytes, nullptr));
  check(context, call, prepare, decode, prefill);
  return 0;
}
