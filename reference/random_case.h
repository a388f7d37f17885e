// Builders of random, realistic inputs for one call: paged caches in every layout, index tables
// with invalid, out-of-range and duplicate indices, per-row lengths (including 0), sinks,
// optional NaN bytes in every cache slot that no row selects. Host memory only; GPU tests and
// tools copy a HostCase to the device and repoint its arguments.
//
// What a case looks like (all draws from std::mt19937_64 seeded with `seed`, with distributions
// written out in reference/rng.h, so a seed gives the same bytes with any standard library):
// - q: normal values times a per-(row, head) magnitude 2^U(-0.5, 0.5); bf16, or e4m3 of
//   value / q_scale.
// - KV values: normal times a per-token magnitude 2^U(-m, m) (m = token_magnitude_log2, 1.5 by
//   default) times a per-64-dim magnitude
//   2^U(-1, 1) (so packed tiles get different scales); the uniform layout stores value / kv_scale.
//   Packed padding bytes hold random garbage.
// - Pages: a random permutation of the pool's pages, as a block table scatters them. Strides are
//   smla_min_page_stride, or for a quarter of the sources 16..128 bytes more.
// - Source 0 is window-like: rows are consecutive positions of one request, each listing its
//   last min(position + 1, width) tokens oldest first, then -1. Source 1 is top-k-like: `width`
//   distinct random entries of the pool in random order. Sources past 1 would be top-k-like too.
// - num_pages = 0: window pool = the rows' tokens, top-k pool = 2 * width entries, each rounded up
//   to pages plus one page of slack. With a caller's num_pages, window positions wrap if needed.
// - Each listed entry is invalid with probability invalid_fraction (-1 half of the time, else
//   another negative, INT32_MIN, exactly num_pages * page_size, past it, or INT32_MAX) and a
//   duplicate of another column of its row with probability 0.03.
// - Lengths: a quarter of the rows the full width, an eighth 0 (if allowed), else uniform in
//   [0 or 1, width]. When every source allows empty rows and there are >= 2 rows, one row is
//   made empty in all sources (length 0, or all entries -1 for a source without lengths).
// - index_row_stride is the width or, for half of the sources, up to 16 more. Columns past a
//   row's length and past the width are traps: with nan_in_unselected, half of them point at
//   NaN-poisoned slots; past the width the rest are 0x7fffffff.
// - nan_in_unselected: every slot no valid entry selects holds NaN (e4m3 0x7F or 0xFF,
//   alternating by slot; bf16 0x7FC0; packed scale and padding bytes 0xFF), page tails 0xFF.
// - Window and prefix sources (docs/semantics.md) read each request's block table:
//   make_block_table scatters the pages a request's rows read over a pool with one slack page,
//   invalidates page numbers with probability invalid_fraction, and fills the columns past them
//   with traps. Their rows are the requests of request_rows / cached_tokens.
// - Sinks: U(-2, 4) as float; with infinite_sinks and >= 2 heads one head +inf, another -inf.
#pragma once

#include <smla.h>

#include <cstdint>
#include <vector>

namespace smla::ref {

struct SourceSpec {
  int64_t num_pages = 0;           // 0: just enough pages for the rows' entries, plus slack
  bool with_lengths = true;        // per-row lengths array (else every row uses the full width)
  bool allow_empty_rows = true;    // some rows get length 0
  double invalid_fraction = 0.05;  // share of listed entries that are -1, negative or past the end
};

struct CaseSpec {
  smla_problem problem{};
  int num_rows = 1;
  uint64_t seed = 1;
  float softmax_scale = 0.044194173824159216f;  // 1/sqrt(512)
  float q_scale = 1.0f;                         // fp8 q only
  float kv_scale = 1.0f;                        // uniform layout only
  bool nan_in_unselected = true;                // poison every cache slot no row selects
  double token_magnitude_log2 = 1.5;            // per-token magnitudes 2^U(-m, m)
  SourceSpec sources[SMLA_MAX_SOURCES];
  // Sinks: random finite values; set to also place a +inf and a -inf sink among the heads.
  bool infinite_sinks = false;
  // With a window or prefix source, the requests: the new rows of each (summing to num_rows)
  // and the tokens cached before them. Empty: one request of num_rows rows, nothing cached.
  std::vector<int> request_rows;
  std::vector<int> cached_tokens;
};

struct HostSource {
  std::vector<uint8_t> cache;  // num_pages * page_stride_bytes bytes
  int64_t page_stride_bytes = 0;
  int64_t num_pages = 0;
  std::vector<int32_t> indices;  // [num_rows][index_row_stride]; a block table: [requests][...]
  int64_t index_row_stride = 0;
  std::vector<int32_t> lengths;  // [num_rows], empty when the source has no lengths
};

struct HostCase {
  smla_problem problem{};
  int num_rows = 0;
  std::vector<uint8_t> q;  // [num_rows][num_heads][512] of q_dtype, contiguous
  float q_scale = 1.0f;
  float kv_scale = 1.0f;
  float softmax_scale = 0.0f;
  HostSource sources[SMLA_MAX_SOURCES];
  std::vector<float> sink;  // [num_heads], empty without sink
  // The varlen description where a source is a window or prefix, else both empty.
  std::vector<int32_t> cu_seqlens_q;  // [requests + 1]
  std::vector<int32_t> kv_lens;       // [requests]

  // Arguments whose pointers point into this case's host vectors; out and lse are NULL (their
  // strides describe a contiguous [num_rows][num_heads][512] out).
  smla_args host_args() const;
  // The varlen description on the host arrays (its device fields point at them too), or
  // nothing (num_requests 0, NULL arrays) when every source is a list.
  smla_varlen host_varlen() const;
};

HostCase make_random_case(const CaseSpec& spec);

}  // namespace smla::ref
