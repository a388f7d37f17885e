// `smla bench`: times decode calls of one problem at a list of row counts on the GPU, with KV
// from HBM (index tables rotate over sets that together touch several times the L2), and
// reports median µs, effective GB/s and TFLOPS, and the fraction of the gather-bandwidth and
// MMA ceilings measured on the H200 (docs/PERFORMANCE.md).
#pragma once

#include <smla.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/device_session.h"
#include "support/status.h"

namespace smla {

struct BenchOptions {
  std::vector<int> rows = {1, 8, 32, 64, 128, 256};
  int iterations = 20;   // graph replays per measurement
  int repeats = 7;       // measurements; the median is reported
  double pool_gb = 1.0;  // KV pool per source: random entries over ~17x the L2
};

struct BenchRow {
  std::string device;  // the GPU's name: the fractions are of the H200's ceilings whatever it is
  std::string problem;
  int rows = 0;
  double median_us = 0;
  double spread_us = 0;    // max - min over the repeats
  double kv_bytes = 0;     // valid entries * token bytes
  double total_bytes = 0;  // + q + out
  double flops = 0;
  double gbps = 0;
  double tflops = 0;
  double gather_fraction = 0;
  double mma_fraction = 0;
  std::string mode;    // "split" (segments + combine), "prefix" (a row's first segments folded
                       // in one CTA, the others one each, + combine), "whole" (a CTA per row),
                       // "fast" (the batch-variant fast path: smla_options.batch_variant), or
                       // "tuned-" and one of those (a tuning row's tile: autotune/tuning.h)
  bool split = false;  // the call ran the combine kernel ("split" or "prefix")
};

// The device, the KV pools and each row count's inputs of one problem: built once, timed with
// any number of contexts (`smla tune` times a context per candidate on the same inputs).
class ProblemBench {
 public:
  static Status open(const smla_problem& problem, double pool_gb,
                     std::unique_ptr<ProblemBench>* bench);
  ~ProblemBench();

  // Per-call µs of `ctx`'s decode calls of `rows` rows: the median and the spread (max - min)
  // of `options.repeats` measurements of `options.iterations` graph replays, each replay a call
  // per input set, so consecutive calls gather different entries.
  Status time(smla_context* ctx, int rows, const BenchOptions& options, double* median_us,
              double* spread_us);
  const DeviceSession& session() const { return *session_; }

 private:
  struct Data;
  ProblemBench() = default;
  smla_problem problem_{};
  std::unique_ptr<DeviceSession> session_;
  CUstream stream_ = nullptr;
  std::unique_ptr<Data> data_;  // pools, and inputs by row count
};

Status bench_problem(const smla_problem& problem, const BenchOptions& options,
                     std::vector<BenchRow>* rows);

// Host time of one warm smla_decode call (median over `calls`), and the time to load a
// problem's kernels from the disk cache into a fresh context.
struct OverheadReport {
  double decode_host_us = 0;
  double prepare_from_cache_ms = 0;
};
Status measure_overheads(const smla_problem& problem, int calls, OverheadReport* report);

// The ceilings (docs/PERFORMANCE.md, measured on the H200), and whether a device's name says it is
// the GPU they were measured on.
double gather_ceiling_bytes_per_s(smla_kv_layout layout);
constexpr double kMmaBf16Flops = 640e12;
inline bool is_ceilings_device(const std::string& device_name) {
  return device_name == "NVIDIA H200";  // not a GH200 or an H200 NVL
}

}  // namespace smla
