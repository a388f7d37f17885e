// make_random_case: deterministic per seed, lengths in range, every unselected slot NaN, every
// selected slot finite and not all zero, DSv4-like tables with invalid entries and duplicates,
// and a reference result without NaN (no poison leaks).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "random_spec.h"
#include "reference/attention.h"
#include "reference/codecs.h"

namespace smla::ref::testing {
namespace {

constexpr int kDim = SMLA_HEAD_DIM;

int64_t length_of(const HostCase& c, int s, int r) {
  const HostSource& source = c.sources[s];
  return source.lengths.empty() ? c.problem.sources[s].width : source.lengths[r];
}

// selected[t]: some row's valid entry points at t (computed here from the definition).
std::vector<bool> selected(const HostCase& c, int s) {
  const HostSource& source = c.sources[s];
  const int64_t limit = source.num_pages * c.problem.sources[s].page_size;
  std::vector<bool> result(limit, false);
  for (int r = 0; r < c.num_rows; ++r) {
    for (int64_t col = 0; col < length_of(c, s, r); ++col) {
      const int32_t index = source.indices[r * source.index_row_stride + col];
      if (index >= 0 && index < limit) result[index] = true;
    }
  }
  return result;
}

void check_case_properties(const CaseSpec& spec) {
  const HostCase c = make_random_case(spec);
  ASSERT_EQ(c.num_rows, spec.num_rows);
  const int heads = spec.problem.num_heads;
  const size_t q_elements = static_cast<size_t>(spec.num_rows) * heads * kDim;
  ASSERT_EQ(c.q.size(), spec.problem.q_dtype == SMLA_FP8_E4M3 ? q_elements : 2 * q_elements);
  EXPECT_TRUE(std::any_of(c.q.begin(), c.q.end(), [](uint8_t b) { return b != 0; }));
  bool any_empty_row = false;
  for (int r = 0; r < c.num_rows; ++r) {
    bool empty = true;
    for (int s = 0; s < spec.problem.num_sources; ++s) {
      const HostSource& source = c.sources[s];
      const int64_t limit = source.num_pages * spec.problem.sources[s].page_size;
      for (int64_t col = 0; col < length_of(c, s, r); ++col) {
        const int32_t index = source.indices[r * source.index_row_stride + col];
        empty = empty && !(index >= 0 && index < limit);
      }
    }
    any_empty_row = any_empty_row || empty;
  }
  bool every_source_allows_empty = true;
  for (int s = 0; s < spec.problem.num_sources; ++s) {
    every_source_allows_empty = every_source_allows_empty && spec.sources[s].allow_empty_rows;
  }
  if (every_source_allows_empty && spec.num_rows >= 2) {
    EXPECT_TRUE(any_empty_row) << "one row is empty in every source";
  }

  for (int s = 0; s < spec.problem.num_sources; ++s) {
    SCOPED_TRACE(::testing::Message() << "source " << s);
    const smla_source_desc& desc = spec.problem.sources[s];
    const HostSource& source = c.sources[s];
    const int64_t min_stride = smla_min_page_stride(spec.problem.kv_layout, desc.page_size);
    EXPECT_GE(source.page_stride_bytes, min_stride);
    EXPECT_EQ((source.page_stride_bytes - min_stride) % 16, 0);
    EXPECT_EQ(source.cache.size(),
              static_cast<size_t>(source.num_pages * source.page_stride_bytes));
    EXPECT_GE(source.index_row_stride, desc.width);
    EXPECT_EQ(source.indices.size(), static_cast<size_t>(spec.num_rows * source.index_row_stride));
    EXPECT_EQ(source.lengths.size(), spec.sources[s].with_lengths ? size_t(spec.num_rows) : 0);
    for (int32_t length : source.lengths) {
      EXPECT_GE(length, spec.sources[s].allow_empty_rows ? 0 : 1);
      EXPECT_LE(length, desc.width);
    }
    const std::vector<bool> chosen = selected(c, s);
    for (int64_t t = 0; t < static_cast<int64_t>(chosen.size()); ++t) {
      double values[kDim];
      decode_token(spec.problem.kv_layout, desc.page_size, source.page_stride_bytes,
                   source.cache.data(), t, c.kv_scale, values);
      if (chosen[t] || !spec.nan_in_unselected) {
        ASSERT_TRUE(std::all_of(values, values + kDim, [](double v) { return std::isfinite(v); }))
            << "token " << t;
        ASSERT_TRUE(std::any_of(values, values + kDim, [](double v) { return v != 0; }))
            << "token " << t;
      } else {
        ASSERT_TRUE(std::all_of(values, values + kDim, [](double v) { return std::isnan(v); }))
            << "unselected token " << t << " is not poisoned";
      }
    }
  }
  if (spec.problem.has_sink) {
    ASSERT_EQ(c.sink.size(), static_cast<size_t>(heads));
    int positive = 0, negative = 0;
    for (float sink : c.sink) {
      if (std::isinf(sink)) {
        (sink > 0 ? positive : negative)++;
      } else {
        EXPECT_TRUE(sink >= -2 && sink <= 4) << sink;
      }
    }
    const bool infinite = spec.infinite_sinks && heads >= 2;
    EXPECT_EQ(positive, infinite ? 1 : 0);
    EXPECT_EQ(negative, infinite ? 1 : 0);
  } else {
    EXPECT_TRUE(c.sink.empty());
  }

  // No NaN leaks into the reference: it reads only selected slots.
  const ReferenceResult result = attention(c.problem, c.host_args());
  EXPECT_TRUE(
      std::none_of(result.out.begin(), result.out.end(), [](double v) { return std::isnan(v); }));
  EXPECT_TRUE(
      std::none_of(result.lse.begin(), result.lse.end(), [](double v) { return std::isnan(v); }));
}

TEST(RandomCase, PropertiesInEveryLayout) {
  for (smla_kv_layout layout : {SMLA_KV_FP8_UNIFORM, SMLA_KV_FP8_PACKED, SMLA_KV_BF16}) {
    for (smla_dtype q_dtype : {SMLA_BF16, SMLA_FP8_E4M3}) {
      for (uint64_t seed : {1, 2, 3}) {
        SCOPED_TRACE(::testing::Message()
                     << "layout " << layout << " q " << q_dtype << " seed " << seed);
        check_case_properties(small_spec(layout, q_dtype, 3, 5, seed));
      }
    }
  }
  CaseSpec plain = small_spec(SMLA_KV_FP8_PACKED, SMLA_BF16, 1, 4, 8);
  plain.problem.num_sources = 1;
  plain.problem.has_sink = 0;
  plain.nan_in_unselected = false;
  plain.sources[0].with_lengths = false;
  plain.sources[0].num_pages = 3;  // a pool the caller sizes: 3 pages of 256
  {
    SCOPED_TRACE("one source, no sink, no poison, no lengths");
    check_case_properties(plain);
  }
  plain.sources[0].allow_empty_rows = false;
  plain.sources[0].with_lengths = true;
  {
    SCOPED_TRACE("no empty rows");
    check_case_properties(plain);
  }
}

TEST(RandomCase, DeterministicPerSeed) {
  const CaseSpec spec = small_spec(SMLA_KV_FP8_PACKED, SMLA_FP8_E4M3, 4, 6, 5);
  const HostCase a = make_random_case(spec);
  const HostCase b = make_random_case(spec);
  EXPECT_EQ(a.q, b.q);
  EXPECT_EQ(a.sink, b.sink);
  for (int s = 0; s < 2; ++s) {
    EXPECT_EQ(a.sources[s].cache, b.sources[s].cache);
    EXPECT_EQ(a.sources[s].indices, b.sources[s].indices);
    EXPECT_EQ(a.sources[s].lengths, b.sources[s].lengths);
  }
  CaseSpec other = spec;
  other.seed = 6;
  const HostCase c = make_random_case(other);
  EXPECT_NE(a.q, c.q);
  EXPECT_NE(a.sources[1].indices, c.sources[1].indices);
}

// The tables look like DSv4 and carry every kind of trap.
TEST(RandomCase, TablesLikeDsv4WithTraps) {
  CaseSpec spec = small_spec(SMLA_KV_BF16, SMLA_BF16, 2, 64, 9);
  spec.problem.sources[0] = {SMLA_SOURCE_LIST, 8, 16, 0};
  spec.problem.sources[1] = {SMLA_SOURCE_LIST, 4, 32, 0};
  const HostCase c = make_random_case(spec);
  int consecutive = 0, window_pairs = 0, invalid = 0, duplicates = 0, traps = 0;
  std::set<int32_t> distinct_entries;
  for (int s = 0; s < 2; ++s) {
    const HostSource& source = c.sources[s];
    const int width = spec.problem.sources[s].width;
    const int64_t limit = source.num_pages * spec.problem.sources[s].page_size;
    const std::vector<bool> chosen = selected(c, s);
    for (int r = 0; r < c.num_rows; ++r) {
      const int32_t* row = source.indices.data() + r * source.index_row_stride;
      std::set<int32_t> seen;
      for (int col = 0; col < width; ++col) {
        const bool valid = row[col] >= 0 && row[col] < limit;
        if (col >= length_of(c, s, r)) {
          traps += valid && !chosen[row[col]];
          continue;
        }
        invalid += !valid;
        if (valid && !seen.insert(row[col]).second) ++duplicates;
        if (s == 0 && col > 0 && valid && row[col - 1] >= 0 && row[col - 1] < limit) {
          ++window_pairs;
          consecutive += int64_t{row[col]} == int64_t{row[col - 1]} + 1;
        }
        if (s == 1 && valid) distinct_entries.insert(row[col]);
      }
      for (int64_t col = width; col < source.index_row_stride; ++col) {
        const bool valid = row[col] >= 0 && row[col] < limit;
        EXPECT_TRUE(row[col] == 0x7fffffff || (valid && !chosen[row[col]])) << row[col];
      }
    }
  }
  EXPECT_GT(consecutive, window_pairs / 2) << "window entries are mostly consecutive tokens";
  EXPECT_GT(distinct_entries.size(), 32u) << "top-k entries spread over the pool";
  EXPECT_GT(invalid, 0);
  EXPECT_GT(duplicates, 0);
  EXPECT_GT(traps, 0) << "stale entries past the length aim at NaN slots";
}

}  // namespace
}  // namespace smla::ref::testing
