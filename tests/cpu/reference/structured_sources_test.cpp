// Window and prefix sources in the reference: spans and block-table lookups computed by hand
// from the varlen rule (docs/semantics.md), a structured call equal to the list call written out
// by hand, and random structured cases whose poisoned slots never reach a result.
#include "reference/structured_sources.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "reference/random_case.h"

namespace smla::ref::testing {
namespace {

// Two requests: 3 new rows over 7 cached tokens (positions 7, 8, 9), and 2 rows with nothing
// cached (positions 0, 1).
struct TwoRequests {
  std::vector<int32_t> cu = {0, 3, 5};
  std::vector<int32_t> kv = {10, 2};
  smla_varlen varlen{2, cu.data(), kv.data(), cu.data(), kv.data()};
};

TEST(StructuredSources, WindowSpans) {
  const TwoRequests call;
  const smla_source_desc window{SMLA_SOURCE_WINDOW, 2, 4, 0};
  const struct {
    int row, request;
    int64_t position, first, end;
  } expected[] = {{0, 0, 7, 4, 8}, {2, 0, 9, 6, 10}, {3, 1, 0, 0, 1}, {4, 1, 1, 0, 2}};
  for (const auto& e : expected) {
    const StructuredSpan span = structured_span(window, call.varlen, e.row);
    EXPECT_EQ(span.request, e.request) << e.row;
    EXPECT_EQ(span.position, e.position) << e.row;
    EXPECT_EQ(span.first, e.first) << e.row;
    EXPECT_EQ(span.end, e.end) << e.row;
  }
}

TEST(StructuredSources, PrefixSpans) {
  const TwoRequests call;
  // Ratio 4: position 7 has 8 tokens, 2 whole entries; 9 has 10, still 2, capped by width 2
  // anyway; positions 0 and 1 have none.
  const smla_source_desc prefix{SMLA_SOURCE_PREFIX, 1, 2, 4};
  const int64_t expected_end[] = {2, 2, 2, 0, 0};
  for (int row = 0; row < 5; ++row) {
    const StructuredSpan span = structured_span(prefix, call.varlen, row);
    EXPECT_EQ(span.first, 0) << row;
    EXPECT_EQ(span.end, expected_end[row]) << row;
  }
  const smla_source_desc narrow{SMLA_SOURCE_PREFIX, 1, 1, 4};
  EXPECT_EQ(structured_span(narrow, call.varlen, 2).end, 1);  // the width caps the prefix
}

TEST(StructuredSources, BlockTableEntries) {
  // Request 1's table row: pages 5, -1, 8 (pages of 2, 8 pages, 3 columns).
  const std::vector<int32_t> table = {0, 0, 0, 5, -1, 8};
  smla_source_args source{};
  source.num_pages = 8;
  source.indices = table.data();
  source.index_row_stride = 3;
  const smla_source_desc desc{SMLA_SOURCE_WINDOW, 2, 128, 0};
  EXPECT_EQ(block_table_entry(desc, source, 1, 0), 10);
  EXPECT_EQ(block_table_entry(desc, source, 1, 1), 11);
  EXPECT_EQ(block_table_entry(desc, source, 1, 2), -1);  // page -1
  EXPECT_EQ(block_table_entry(desc, source, 1, 4), -1);  // page 8 of 8
  EXPECT_EQ(block_table_entry(desc, source, 1, 6), -1);  // past the table's columns
  source.num_pages = 9;
  EXPECT_EQ(block_table_entry(desc, source, 1, 5), 17);
}

TEST(StructuredSources, EqualTheListCallWrittenOut) {
  // One request of 2 rows over 2 cached tokens (positions 2 and 3). Window: width 3, pages of 2,
  // block table {3, 1}: tokens 0, 1 are slots 6, 7 and tokens 2, 3 slots 2, 3. Prefix: ratio 2,
  // width 2, pages of 1, block table {2, -1}: entry 0 is slot 2, entry 1 is skipped.
  smla_problem problem{};
  problem.num_heads = 4;
  problem.q_dtype = SMLA_BF16;
  problem.kv_layout = SMLA_KV_FP8_PACKED;
  problem.q_len = 1;
  problem.num_sources = 2;
  problem.sources[0] = {SMLA_SOURCE_LIST, 2, 3, 0};
  problem.sources[1] = {SMLA_SOURCE_LIST, 1, 2, 0};
  problem.has_sink = 1;
  problem.want_lse = 1;
  CaseSpec spec;
  spec.problem = problem;
  spec.num_rows = 2;
  spec.nan_in_unselected = false;
  spec.sources[0].num_pages = 4;
  spec.sources[1].num_pages = 4;
  const HostCase host = make_random_case(spec);

  smla_args list = host.host_args();
  const std::vector<int32_t> window_lists = {6, 7, 2, 7, 2, 3}, window_lengths = {3, 3};
  const std::vector<int32_t> prefix_lists = {2, -1, 2, -1}, prefix_lengths = {1, 2};
  list.sources[0].indices = window_lists.data();
  list.sources[0].index_row_stride = 3;
  list.sources[0].lengths = window_lengths.data();
  list.sources[1].indices = prefix_lists.data();
  list.sources[1].index_row_stride = 2;
  list.sources[1].lengths = prefix_lengths.data();

  smla_problem structured = problem;
  structured.sources[0].kind = SMLA_SOURCE_WINDOW;
  structured.sources[1] = {SMLA_SOURCE_PREFIX, 1, 2, 2};
  smla_args tables = host.host_args();
  const std::vector<int32_t> window_table = {3, 1}, prefix_table = {2, -1};
  tables.sources[0].indices = window_table.data();
  tables.sources[0].index_row_stride = 2;
  tables.sources[0].lengths = nullptr;
  tables.sources[1].indices = prefix_table.data();
  tables.sources[1].index_row_stride = 2;
  tables.sources[1].lengths = nullptr;
  const std::vector<int32_t> cu = {0, 2}, kv = {4};
  const smla_varlen varlen{1, cu.data(), kv.data(), cu.data(), kv.data()};

  const ReferenceResult expected = attention(problem, list, 1);
  const ReferenceResult actual = varlen_attention(structured, tables, &varlen, 1);
  EXPECT_EQ(actual.out, expected.out);  // the same entries in the same order: the same sums
  EXPECT_EQ(actual.lse, expected.lse);
}

TEST(StructuredSources, RandomCasesLeakNoPoison) {
  // Window + HCA-like prefix over three requests with cached prefixes; every slot no row reads
  // is NaN, so a span or block-table lookup that disagreed with the selection would show.
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE(seed);
    CaseSpec spec;
    spec.problem.num_heads = 8;
    spec.problem.q_dtype = SMLA_BF16;
    spec.problem.kv_layout = seed == 2 ? SMLA_KV_BF16 : SMLA_KV_FP8_PACKED;
    spec.problem.q_len = 1;
    spec.problem.num_sources = 2;
    spec.problem.sources[0] = {SMLA_SOURCE_WINDOW, 16, 32, 0};
    spec.problem.sources[1] = {SMLA_SOURCE_PREFIX, 2, 16, 4};
    spec.problem.has_sink = 1;
    spec.problem.want_lse = 1;
    spec.request_rows = {5, 0, 9};
    spec.cached_tokens = {0, 7, 40};
    spec.num_rows = 14;
    spec.seed = seed;
    const HostCase host = make_random_case(spec);
    ASSERT_EQ(host.cu_seqlens_q, (std::vector<int32_t>{0, 5, 5, 14}));
    ASSERT_EQ(host.kv_lens, (std::vector<int32_t>{5, 7, 49}));
    const smla_varlen varlen = host.host_varlen();
    const ReferenceResult result = varlen_attention(host.problem, host.host_args(), &varlen, 2);
    for (const double value : result.out) ASSERT_TRUE(std::isfinite(value));
    // Request 2's last row (position 48) reads 32 window tokens and 12 prefix entries: its
    // block tables hold at least the 4 and 6 pages they span.
    EXPECT_GE(host.sources[0].index_row_stride, 4);
    EXPECT_GE(host.sources[1].index_row_stride, 6);
    EXPECT_TRUE(host.sources[0].lengths.empty());
  }
}

}  // namespace
}  // namespace smla::ref::testing
