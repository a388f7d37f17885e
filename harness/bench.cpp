#include "harness/bench.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

#include "deployments/deployment.h"
#include "harness/device_case.h"
#include "harness/device_session.h"
#include "reference/codecs.h"
#include "runtime/context.h"

namespace smla {
namespace {

constexpr double kL2Bytes = 60e6;

// Random finite cache bytes: e4m3 without the NaN code (bit 3 cleared), bf16 of magnitude
// [2^-7, 2^-6), packed ue8m0 scales near 2^-6 and bf16 rope. Word at a time: pools are large.
void fill_cache(smla_kv_layout layout, int page_size, int64_t page_stride,
                std::vector<unsigned char>* cache, std::mt19937_64& rng) {
  const uint64_t bf16_keep = 0x807f807f807f807full, bf16_exponent = 0x3c003c003c003c00ull;
  for (size_t i = 0; i + 8 <= cache->size(); i += 8) {
    uint64_t bits = rng();
    bits =
        layout == SMLA_KV_BF16 ? (bits & bf16_keep) | bf16_exponent : bits & 0xf7f7f7f7f7f7f7f7ull;
    std::memcpy(cache->data() + i, &bits, 8);
  }
  if (layout != SMLA_KV_FP8_PACKED) return;
  for (size_t page = 0; (page + 1) * page_stride <= cache->size(); ++page) {
    unsigned char* base = cache->data() + page * page_stride;
    for (int t = 0; t < page_size; ++t) {
      unsigned char* scales =
          base + static_cast<int64_t>(page_size) * SMLA_PACKED_DATA_BYTES + t * 8;
      for (int s = 0; s < 7; ++s) scales[s] = static_cast<unsigned char>(119 + rng() % 6);
      uint16_t* rope = reinterpret_cast<uint16_t*>(base + t * SMLA_PACKED_DATA_BYTES + 448);
      for (int i = 0; i < 64; ++i) rope[i] = static_cast<uint16_t>((rope[i] & 0x807f) | 0x3c00);
    }
  }
}

struct SourcePool {
  DeviceBuffer cache;
  int64_t num_pages = 0;
  int64_t page_stride = 0;
};

// The caches of one benchmark: a pool per source, far larger than the L2.
struct BenchPools {
  SourcePool pools[SMLA_MAX_SOURCES];
};

// `sets` calls' index tables, q and out over the pools.
struct BenchInputs {
  std::vector<DeviceBuffer> buffers;
  std::vector<smla_args> sets;
};

Status make_pools(const DeviceSession& session, const smla_problem& p, double pool_bytes,
                  BenchPools* out) {
  std::mt19937_64 rng(12345);
  for (int s = 0; s < p.num_sources; ++s) {
    SourcePool& sp = out->pools[s];
    sp.page_stride = smla_min_page_stride(p.kv_layout, p.sources[s].page_size);
    sp.num_pages = std::max<int64_t>(1, static_cast<int64_t>(pool_bytes / sp.page_stride));
    std::vector<unsigned char> host(static_cast<size_t>(sp.num_pages * sp.page_stride));
    fill_cache(p.kv_layout, p.sources[s].page_size, sp.page_stride, &host, rng);
    SMLA_TRY(session.copy_to_device(host, &sp.cache));
  }
  return ok_status();
}

Status make_inputs(const DeviceSession& session, const smla_problem& p, const BenchPools& pools,
                   int rows, BenchInputs* in) {
  std::mt19937_64 rng(12345 + rows);
  int64_t tokens_per_row = 0;
  for (int s = 0; s < p.num_sources; ++s) tokens_per_row += p.sources[s].width;
  const double call_bytes =
      static_cast<double>(rows) * tokens_per_row * ref::token_bytes(p.kv_layout);
  const int sets = static_cast<int>(std::clamp(3.0 * kL2Bytes / call_bytes + 1.0, 2.0, 64.0));
  const size_t q_elements = static_cast<size_t>(rows) * p.num_heads * SMLA_HEAD_DIM;
  const size_t q_bytes = q_elements * (p.q_dtype == SMLA_BF16 ? 2 : 1);
  DeviceBuffer out;
  SMLA_TRY(session.allocate(q_elements * 2, &out));
  DeviceBuffer lse;
  SMLA_TRY(session.allocate(static_cast<size_t>(rows) * p.num_heads * 4, &lse));
  std::vector<float> sink(p.num_heads);
  for (float& v : sink) v = static_cast<float>(rng() % 1000) / 250.0f - 2.0f;
  DeviceBuffer sink_buffer;
  SMLA_TRY(session.allocate(sink.size() * 4, &sink_buffer));
  SMLA_TRY(sink_buffer.upload(sink.data(), sink.size() * 4));
  for (int set = 0; set < sets; ++set) {
    smla_args a{};
    a.num_rows = rows;
    std::vector<unsigned char> q(q_bytes);
    for (size_t i = 0; i < q.size(); ++i) {
      const unsigned char b = static_cast<unsigned char>(rng());
      q[i] = p.q_dtype == SMLA_BF16
                 ? (i % 2 ? static_cast<unsigned char>((b & 0x80) | (0x3e + (b & 1))) : b)
                 : static_cast<unsigned char>((b & 0x7f) == 0x7f ? b & 0xfe : b);
    }
    DeviceBuffer q_buffer;
    SMLA_TRY(session.copy_to_device(q, &q_buffer));
    a.q = q_buffer.get();
    a.q_head_stride = SMLA_HEAD_DIM;
    a.q_row_stride = static_cast<int64_t>(p.num_heads) * SMLA_HEAD_DIM;
    a.q_scale = 1.0f;
    a.kv_scale = 1.0f;
    a.softmax_scale = 0.044194173824159216f;
    for (int s = 0; s < p.num_sources; ++s) {
      const int width = p.sources[s].width;
      const int64_t limit = pools.pools[s].num_pages * p.sources[s].page_size;
      std::vector<int32_t> indices(static_cast<size_t>(rows) * width);
      for (int r = 0; r < rows; ++r) {
        if (s == 0) {  // a sliding window: consecutive tokens ending at a random position
          const int64_t end =
              width + static_cast<int64_t>(
                          rng() % static_cast<uint64_t>(std::max<int64_t>(1, limit - width)));
          for (int c = 0; c < width; ++c)
            indices[r * width + c] = static_cast<int32_t>((end - width + c) % limit);
        } else {  // a top-k list: random entries of the pool
          for (int c = 0; c < width; ++c)
            indices[r * width + c] = static_cast<int32_t>(rng() % limit);
        }
      }
      DeviceBuffer index_buffer;
      SMLA_TRY(session.allocate(indices.size() * 4, &index_buffer));
      SMLA_TRY(index_buffer.upload(indices.data(), indices.size() * 4));
      a.sources[s] = {pools.pools[s].cache.get(),
                      pools.pools[s].page_stride,
                      pools.pools[s].num_pages,
                      static_cast<const int32_t*>(index_buffer.get()),
                      width,
                      nullptr};
      in->buffers.push_back(std::move(index_buffer));
    }
    a.sink = static_cast<const float*>(sink_buffer.get());
    a.out = out.get();
    a.out_row_stride = a.q_row_stride;
    a.out_head_stride = SMLA_HEAD_DIM;
    a.lse = static_cast<float*>(lse.get());
    in->buffers.push_back(std::move(q_buffer));
    in->sets.push_back(a);
  }
  in->buffers.push_back(std::move(out));
  in->buffers.push_back(std::move(lse));
  in->buffers.push_back(std::move(sink_buffer));
  return ok_status();
}

// A timing's graph and events, destroyed on every return.
struct TimingObjects {
  explicit TimingObjects(const CudaDriver& driver) : d(driver) {}
  ~TimingObjects() {
    if (start) d.cuEventDestroy(start);
    if (stop) d.cuEventDestroy(stop);
    if (exec) d.cuGraphExecDestroy(exec);
    if (graph) d.cuGraphDestroy(graph);
  }
  TimingObjects(const TimingObjects&) = delete;
  TimingObjects& operator=(const TimingObjects&) = delete;
  const CudaDriver& d;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  CUevent start = nullptr, stop = nullptr;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

double gather_ceiling_bytes_per_s(smla_kv_layout layout) {
  return layout == SMLA_KV_FP8_PACKED ? 4.47e12 : layout == SMLA_KV_BF16 ? 4.58e12 : 4.54e12;
}

struct ProblemBench::Data {
  BenchPools pools;
  std::map<int, BenchInputs> inputs;  // by row count
};

Status ProblemBench::open(const smla_problem& problem, double pool_gb,
                          std::unique_ptr<ProblemBench>* bench) {
  std::unique_ptr<ProblemBench> b(new ProblemBench());
  b->problem_ = problem;
  b->data_ = std::make_unique<Data>();
  SMLA_TRY(DeviceSession::open(0, &b->session_));
  SMLA_TRY(b->session_->create_stream(&b->stream_));
  SMLA_TRY(make_pools(*b->session_, problem, pool_gb * 1e9, &b->data_->pools));
  *bench = std::move(b);
  return ok_status();
}

ProblemBench::~ProblemBench() {
  data_.reset();  // device buffers first, while the session is open
  if (stream_ != nullptr) session_->driver().cuStreamDestroy(stream_);
}

Status ProblemBench::time(smla_context* ctx, int rows, const BenchOptions& options,
                          double* median_us, double* spread_us) {
  const CudaDriver& d = session_->driver();
  size_t workspace_bytes = 0;
  SMLA_TRY(status_of(smla_prepare(ctx, &problem_, rows, &workspace_bytes)));
  DeviceBuffer workspace;
  SMLA_TRY(session_->allocate(workspace_bytes, &workspace));
  auto found = data_->inputs.find(rows);
  if (found == data_->inputs.end()) {
    BenchInputs in;
    SMLA_TRY(make_inputs(*session_, problem_, data_->pools, rows, &in));
    found = data_->inputs.emplace(rows, std::move(in)).first;
  }
  const BenchInputs& in = found->second;
  // One graph: a call per input set, so consecutive calls gather different entries.
  SMLA_TRY(d.check(d.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_GLOBAL),
                   "cuStreamBeginCapture"));
  Status captured;
  for (const smla_args& a : in.sets) {
    captured = status_of(
        smla_decode(ctx, &problem_, &a, nullptr, workspace.get(), workspace_bytes, stream_));
    if (!captured) break;
  }
  TimingObjects t(d);
  SMLA_TRY(d.check(d.cuStreamEndCapture(stream_, &t.graph), "cuStreamEndCapture"));
  SMLA_TRY(captured);
  SMLA_TRY(d.check(d.cuGraphInstantiateWithFlags(&t.exec, t.graph, 0), "cuGraphInstantiate"));
  SMLA_TRY(d.check(d.cuEventCreate(&t.start, CU_EVENT_DEFAULT), "cuEventCreate"));
  SMLA_TRY(d.check(d.cuEventCreate(&t.stop, CU_EVENT_DEFAULT), "cuEventCreate"));
  CUgraphExec exec = t.exec;
  for (int w = 0; w < 3; ++w) SMLA_TRY(d.check(d.cuGraphLaunch(exec, stream_), "cuGraphLaunch"));
  std::vector<double> us;
  for (int r = 0; r < options.repeats; ++r) {
    SMLA_TRY(d.check(d.cuEventRecord(t.start, stream_), "cuEventRecord"));
    for (int i = 0; i < options.iterations; ++i)
      SMLA_TRY(d.check(d.cuGraphLaunch(exec, stream_), "cuGraphLaunch"));
    SMLA_TRY(d.check(d.cuEventRecord(t.stop, stream_), "cuEventRecord"));
    float ms = 0;
    SMLA_TRY(session_->elapsed_ms(t.start, t.stop, &ms));
    us.push_back(1e3 * ms / (options.iterations * static_cast<double>(in.sets.size())));
  }
  *median_us = median(us);
  *spread_us = *std::max_element(us.begin(), us.end()) - *std::min_element(us.begin(), us.end());
  return ok_status();
}

Status bench_problem(const smla_problem& problem, const BenchOptions& options,
                     std::vector<BenchRow>* results) {
  std::unique_ptr<ProblemBench> bench;
  SMLA_TRY(ProblemBench::open(problem, options.pool_gb, &bench));
  smla_context* ctx = nullptr;
  SMLA_TRY(status_of(smla_context_create(nullptr, &ctx)));
  std::unique_ptr<smla_context, smla_status (*)(smla_context*)> owner(ctx, smla_context_destroy);
  DeviceInfo device;
  SMLA_TRY(bench->session().info(&device));
  for (int rows : options.rows) {
    BenchRow row;
    row.device = device.name;
    SMLA_TRY(bench->time(ctx, rows, options, &row.median_us, &row.spread_us));
    row.problem = problem_text(problem);
    row.rows = rows;
    double entries = 0;
    for (int s = 0; s < problem.num_sources; ++s)
      entries += static_cast<double>(rows) * problem.sources[s].width;
    row.kv_bytes = entries * ref::token_bytes(problem.kv_layout);
    const double qo = static_cast<double>(rows) * problem.num_heads * SMLA_HEAD_DIM;
    row.total_bytes = row.kv_bytes + qo * (problem.q_dtype == SMLA_BF16 ? 2 : 1) + qo * 2;
    row.flops = 4.0 * problem.num_heads * entries * SMLA_HEAD_DIM;
    row.gbps = row.total_bytes / (row.median_us * 1e-6) / 1e9;
    row.tflops = row.flops / (row.median_us * 1e-6) / 1e12;
    row.gather_fraction =
        (row.kv_bytes / gather_ceiling_bytes_per_s(problem.kv_layout)) / (row.median_us * 1e-6);
    row.mma_fraction = row.tflops * 1e12 / kMmaBf16Flops;
    // What the context ran (its options are the defaults, so the environment decides its mode,
    // cache and tuning).
    const DecodePlan* plan = context_of(ctx)->plan(problem);
    if (plan == nullptr) return error(SMLA_ERR_INTERNAL, "the timed problem is not prepared");
    const PlannedCall call = plan->call(rows, plan->workspace_bytes(rows));
    const DecodeLaunch& launch = call.launch;
    const char* mode = launch.fast                  ? "fast"
                       : launch.prefix_segments > 1 ? "prefix"
                       : launch.split               ? "split"
                                                    : "whole";
    const bool tuned = plan->kernels()[call.kernel].role == KernelRole::kTuned;
    row.mode = tuned ? std::string("tuned-") + mode : mode;
    row.split = launch.split;
    results->push_back(row);
  }
  return ok_status();
}

Status measure_overheads(const smla_problem& problem, int calls, OverheadReport* report) {
  std::unique_ptr<DeviceSession> session;
  SMLA_TRY(DeviceSession::open(0, &session));
  {
    // Kernels are in the disk cache after this context; a fresh one loads them from there.
    smla_context* warm = nullptr;
    SMLA_TRY(status_of(smla_context_create(nullptr, &warm)));
    size_t bytes = 0;
    const Status prepared = status_of(smla_prepare(warm, &problem, 1, &bytes));
    smla_context_destroy(warm);
    SMLA_TRY(prepared);
  }
  smla_context* ctx = nullptr;
  SMLA_TRY(status_of(smla_context_create(nullptr, &ctx)));
  std::unique_ptr<smla_context, smla_status (*)(smla_context*)> owner(ctx, smla_context_destroy);
  size_t workspace_bytes = 0;
  const auto t0 = std::chrono::steady_clock::now();
  SMLA_TRY(status_of(smla_prepare(ctx, &problem, 1, &workspace_bytes)));
  report->prepare_from_cache_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  BenchPools pools;
  SMLA_TRY(make_pools(*session, problem, 64e6, &pools));
  BenchInputs in;
  SMLA_TRY(make_inputs(*session, problem, pools, 1, &in));
  DeviceBuffer workspace;
  SMLA_TRY(session->allocate(workspace_bytes, &workspace));
  CUstream stream = nullptr;
  SMLA_TRY(session->create_stream(&stream));
  std::vector<double> us;
  us.reserve(calls);
  for (int i = 0; i < calls; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const smla_status rc = smla_decode(ctx, &problem, &in.sets[i % in.sets.size()], nullptr,
                                       workspace.get(), workspace_bytes, stream);
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                     .count());
    SMLA_TRY(status_of(rc));
    if (i % 256 == 255) SMLA_TRY(session->synchronize(stream));  // keep the queue short
  }
  SMLA_TRY(session->synchronize(stream));
  report->decode_host_us = median(us);
  return session->driver().check(session->driver().cuStreamDestroy(stream), "cuStreamDestroy");
}

}  // namespace smla
