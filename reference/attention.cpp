#include "reference/attention.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

#include "reference/codecs.h"

namespace smla::ref {
namespace {

constexpr int kDim = SMLA_HEAD_DIM;
// Heads scored together: with q transposed to [dim][head] inside a block (32 KiB, so it stays in
// L1), the innermost loop runs over independent accumulators, which the compiler vectorizes
// without reassociating any sum: every dot product is still summed in dimension order.
constexpr int kHeadBlock = 8;
// Entries accumulated into out together: one load and store of out per kEntryGroup products,
// added in entry order, so the sums are the same as one entry at a time.
constexpr int kEntryGroup = 4;

// Per-worker buffers, grown to the largest row seen and reused for the next rows. Entries are
// padded to a multiple of kEntryGroup with zero keys and zero weights.
struct RowScratch {
  std::vector<double> keys;      // [padded entries][512], decoded once per row
  std::vector<double> q_blocks;  // [head blocks][512][kHeadBlock], dequantized, padded with 0
  std::vector<double> weights;   // [padded entries][padded heads]: scores, then exp(score - max)
};

int64_t padded_count(int64_t count) {
  return (count + kEntryGroup - 1) / kEntryGroup * kEntryGroup;
}

int64_t row_length(const smla_source_desc& desc, const smla_source_args& source, int row) {
  if (source.lengths == nullptr) return desc.width;
  return std::clamp<int64_t>(source.lengths[row], 0, desc.width);
}

template <typename Visit>
void for_each_valid_entry(const smla_problem& problem, const smla_args& args, int row,
                          Visit&& visit) {
  for (int s = 0; s < problem.num_sources; ++s) {
    const smla_source_desc& desc = problem.sources[s];
    const smla_source_args& source = args.sources[s];
    const int64_t limit = source.num_pages * int64_t{desc.page_size};
    const int32_t* indices = source.indices + row * source.index_row_stride;
    const int64_t length = row_length(desc, source, row);
    for (int64_t c = 0; c < length; ++c) {
      if (indices[c] >= 0 && indices[c] < limit) visit(s, indices[c]);
    }
  }
}

double q_value(const smla_problem& problem, const smla_args& args, int64_t element) {
  if (problem.q_dtype == SMLA_FP8_E4M3) {
    return e4m3_to_float(static_cast<const uint8_t*>(args.q)[element]) * double{args.q_scale};
  }
  uint16_t bits;
  std::memcpy(&bits, static_cast<const uint8_t*>(args.q) + 2 * element, sizeof(bits));
  return bf16_to_float(bits);
}

int64_t decode_row_entries(const smla_problem& problem, const smla_args& args, int row,
                           RowScratch& scratch) {
  int64_t count = 0;
  for_each_valid_entry(problem, args, row, [&](int, int64_t) { ++count; });
  const int64_t padded = padded_count(count);
  if (scratch.keys.size() < static_cast<size_t>(padded * kDim)) scratch.keys.resize(padded * kDim);
  std::fill(scratch.keys.begin() + count * kDim, scratch.keys.begin() + padded * kDim, 0.0);
  int64_t entry = 0;
  for_each_valid_entry(problem, args, row, [&](int s, int64_t token) {
    const smla_source_args& source = args.sources[s];
    decode_token(problem.kv_layout, problem.sources[s].page_size, source.page_stride_bytes,
                 static_cast<const uint8_t*>(source.cache), token, args.kv_scale,
                 scratch.keys.data() + entry * kDim);
    ++entry;
  });
  return count;
}

void load_q_blocks(const smla_problem& problem, const smla_args& args, int row, int blocks,
                   RowScratch& scratch) {
  scratch.q_blocks.assign(static_cast<size_t>(blocks) * kDim * kHeadBlock, 0.0);
  for (int h = 0; h < problem.num_heads; ++h) {
    double* block =
        scratch.q_blocks.data() + static_cast<size_t>(h / kHeadBlock) * kDim * kHeadBlock;
    const int64_t base = row * args.q_row_stride + h * args.q_head_stride;
    for (int d = 0; d < kDim; ++d) {
      block[d * kHeadBlock + h % kHeadBlock] = q_value(problem, args, base + d);
    }
  }
}

// weights[j][h] = softmax_scale * <q_h, k_j> for the `padded` entries, two at a time so that each
// load of q serves both.
void score_entries(int64_t padded, int blocks, double softmax_scale, RowScratch& scratch) {
  const int padded_heads = blocks * kHeadBlock;
  for (int b = 0; b < blocks; ++b) {
    const double* q = scratch.q_blocks.data() + static_cast<size_t>(b) * kDim * kHeadBlock;
    for (int64_t j = 0; j < padded; j += 2) {
      const double* key0 = scratch.keys.data() + j * kDim;
      const double* key1 = key0 + kDim;
      double dot0[kHeadBlock] = {};
      double dot1[kHeadBlock] = {};
      for (int d = 0; d < kDim; ++d) {
        for (int i = 0; i < kHeadBlock; ++i) {
          dot0[i] += q[d * kHeadBlock + i] * key0[d];
          dot1[i] += q[d * kHeadBlock + i] * key1[d];
        }
      }
      double* scores = scratch.weights.data() + j * padded_heads + b * kHeadBlock;
      for (int i = 0; i < kHeadBlock; ++i) {
        scores[i] = softmax_scale * dot0[i];
        scores[padded_heads + i] = softmax_scale * dot1[i];
      }
    }
  }
}

// Turns the scores of every head into exp(score - max) in place; returns per head the softmax
// denominator (sink included) and writes lse (sink excluded).
std::vector<double> softmax_weights(const smla_problem& problem, const smla_args& args,
                                    int64_t count, int padded_heads, RowScratch& scratch,
                                    double* lse) {
  std::vector<double> denominators(problem.num_heads);
  for (int h = 0; h < problem.num_heads; ++h) {
    double max_score = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < count; ++j) {
      max_score = std::max(max_score, scratch.weights[j * padded_heads + h]);
    }
    double sum = 0.0;
    for (int64_t j = 0; j < count; ++j) {
      double& weight = scratch.weights[j * padded_heads + h];
      weight = std::exp(weight - max_score);
      sum += weight;
    }
    lse[h] = max_score + std::log(sum);
    // The sink is a logit of the denominator only: +inf makes it infinite (out = 0), -inf adds 0.
    denominators[h] = problem.has_sink ? sum + std::exp(double{args.sink[h]} - max_score) : sum;
  }
  return denominators;
}

// out[h] = sum_j weights[j][h] * k_j / denominators[h], a group of entries at a time.
void accumulate_out(int heads, int64_t padded, int padded_heads, const RowScratch& scratch,
                    const std::vector<double>& denominators, double* out) {
  for (int64_t j = 0; j < padded; j += kEntryGroup) {
    const double* key = scratch.keys.data() + j * kDim;
    const double* weights = scratch.weights.data() + j * padded_heads;
    for (int h = 0; h < heads; ++h) {
      double weight[kEntryGroup];
      for (int g = 0; g < kEntryGroup; ++g) weight[g] = weights[g * padded_heads + h];
      double* out_head = out + static_cast<size_t>(h) * kDim;
      for (int d = 0; d < kDim; ++d) {
        double sum = out_head[d];
        for (int g = 0; g < kEntryGroup; ++g) sum += weight[g] * key[g * kDim + d];
        out_head[d] = sum;
      }
    }
  }
  for (int h = 0; h < heads; ++h) {
    for (int d = 0; d < kDim; ++d) out[static_cast<size_t>(h) * kDim + d] /= denominators[h];
  }
}

// `out` arrives zeroed; `lse` is written for every head.
void compute_row(const smla_problem& problem, const smla_args& args, int row, RowScratch& scratch,
                 double* out, double* lse) {
  const int heads = problem.num_heads;
  const int64_t count = decode_row_entries(problem, args, row, scratch);
  if (count == 0) {  // out stays 0 whatever the sink
    std::fill(lse, lse + heads, std::numeric_limits<double>::infinity());
    return;
  }
  const int blocks = (heads + kHeadBlock - 1) / kHeadBlock;
  const int padded_heads = blocks * kHeadBlock;
  const int64_t padded = padded_count(count);
  load_q_blocks(problem, args, row, blocks, scratch);
  if (scratch.weights.size() < static_cast<size_t>(padded * padded_heads)) {
    scratch.weights.resize(padded * padded_heads);
  }
  score_entries(padded, blocks, double{args.softmax_scale}, scratch);
  const std::vector<double> denominators =
      softmax_weights(problem, args, count, padded_heads, scratch, lse);
  // Padding entries weigh nothing, whatever q is.
  std::fill(scratch.weights.begin() + count * padded_heads,
            scratch.weights.begin() + padded * padded_heads, 0.0);
  accumulate_out(heads, padded, padded_heads, scratch, denominators, out);
}

}  // namespace

ReferenceResult attention(const smla_problem& problem, const smla_args& args, int threads) {
  const int rows = std::max(args.num_rows, 0);
  const int heads = problem.num_heads;
  ReferenceResult result;
  result.out.assign(static_cast<size_t>(rows) * heads * kDim, 0.0);
  result.lse.assign(static_cast<size_t>(rows) * heads, 0.0);
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min(threads, std::max(rows, 1));

  // Rows differ widely in valid entries, so workers take the next row rather than a fixed range.
  std::atomic<int> next_row{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    try {
      RowScratch scratch;
      for (int row = next_row++; row < rows; row = next_row++) {
        compute_row(problem, args, row, scratch,
                    result.out.data() + static_cast<size_t>(row) * heads * kDim,
                    result.lse.data() + static_cast<size_t>(row) * heads);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      failure = std::current_exception();
      next_row = rows;
    }
  };
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t) workers.emplace_back(work);
  work();
  for (std::thread& worker : workers) worker.join();
  if (failure) std::rethrow_exception(failure);
  return result;
}

}  // namespace smla::ref
