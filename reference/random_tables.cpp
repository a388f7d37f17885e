#include "reference/random_tables.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "reference/structured_sources.h"

namespace smla::ref {
namespace {

constexpr int32_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int32_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr double kDuplicateFraction = 0.03;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t row_length(const smla_source_desc& desc, const HostSource& source, int row) {
  if (source.lengths.empty()) return desc.width;
  return std::clamp<int64_t>(source.lengths[row], 0, desc.width);
}

// A serving stack's block table scatters logical pages over the pool: logical token l lives in
// physical page page_of[l / P]. Logical tokens past the pool wrap around (only with a caller's
// num_pages that is too small for the rows).
struct PageMap {
  std::vector<int64_t> page_of;
  int page_size;
  int64_t physical(int64_t logical) const {
    const int64_t wrapped = logical % (static_cast<int64_t>(page_of.size()) * page_size);
    return page_of[wrapped / page_size] * page_size + wrapped % page_size;
  }
};

PageMap random_page_map(Rng& rng, int64_t num_pages, int page_size) {
  PageMap map{std::vector<int64_t>(num_pages), page_size};
  for (int64_t p = 0; p < num_pages; ++p) map.page_of[p] = p;
  rng.shuffle(map.page_of);
  return map;
}

// The first `count` draws of a Fisher-Yates shuffle of [0, pool), in O(count): distinct values
// when pool >= count (else with repetition), in random order like a top-k result.
std::vector<int64_t> distinct_sample(Rng& rng, int64_t pool, int count) {
  std::vector<int64_t> sample(count);
  if (pool < count) {
    for (int64_t& value : sample) value = rng.uniform_int(0, pool - 1);
    return sample;
  }
  std::unordered_map<int64_t, int64_t> moved;  // position -> value, for positions swapped so far
  auto value_at = [&](int64_t position) {
    const auto it = moved.find(position);
    return it == moved.end() ? position : it->second;
  };
  for (int i = 0; i < count; ++i) {
    const int64_t j = rng.uniform_int(i, pool - 1);
    sample[i] = value_at(j);
    moved[j] = value_at(i);
  }
  return sample;
}

// -1 (what serving stacks pad with) half of the time, else another negative or a value past the
// end, the first one past the end included.
int32_t invalid_index(Rng& rng, int64_t limit) {
  const int32_t first_past_end = static_cast<int32_t>(std::min<int64_t>(limit, kInt32Max));
  switch (rng.chance(0.5) ? 0 : rng.uniform_int(1, 5)) {
    case 0:
      return -1;
    case 1:
      return static_cast<int32_t>(-rng.uniform_int(2, 1000));
    case 2:
      return kInt32Min;
    case 3:
      return first_past_end;
    case 4:
      return static_cast<int32_t>(std::min<int64_t>(limit + rng.uniform_int(1, 1000), kInt32Max));
    default:
      return kInt32Max;
  }
}

// Oldest first, the row's own token last; -1 padding when the row has fewer than `width` tokens.
void fill_window_row(const PageMap& map, int64_t position, int width, int32_t* row) {
  const int64_t tokens = std::min<int64_t>(position + 1, width);
  for (int c = 0; c < width; ++c) {
    row[c] = c < tokens ? static_cast<int32_t>(map.physical(position - tokens + 1 + c)) : -1;
  }
}

void fill_top_k_row(Rng& rng, const PageMap& map, int64_t pool, int width, int32_t* row) {
  const std::vector<int64_t> picks = distinct_sample(rng, pool, width);
  for (int c = 0; c < width; ++c) row[c] = static_cast<int32_t>(map.physical(picks[c]));
}

void corrupt_row(Rng& rng, double invalid_fraction, int64_t limit, int width, int32_t* row) {
  for (int c = 0; c < width; ++c) {
    if (rng.chance(invalid_fraction)) {
      row[c] = invalid_index(rng, limit);
    } else if (width > 1 && rng.chance(kDuplicateFraction)) {
      row[c] = row[rng.uniform_int(0, width - 1)];
    }
  }
}

// A quarter of the rows use the full width, an eighth (when allowed) none, the rest are uniform.
int32_t random_length(Rng& rng, int width, bool allow_empty) {
  const double u = rng.uniform();
  if (allow_empty && u < 0.125) return 0;
  if (u < 0.375) return width;
  return static_cast<int32_t>(rng.uniform_int(allow_empty ? 0 : 1, width));
}

}  // namespace

void make_source_tables(Rng& rng, int source_number, const smla_source_desc& desc,
                        const SourceSpec& spec, int num_rows, HostSource& source) {
  const int width = desc.width;
  const int page_size = desc.page_size;
  const bool window = source_number == 0;
  // Window rows are consecutive positions of one request (prefill or MTP-like); the first
  // position may be below the width so that early rows have short windows.
  int64_t first_position = rng.uniform_int(0, 2 * int64_t{width});
  if (spec.num_pages > 0) {
    source.num_pages = spec.num_pages;
    const int64_t capacity = spec.num_pages * page_size;
    first_position = std::min(first_position, std::max<int64_t>(0, capacity - num_rows));
  } else {
    // Enough pages for every listed token plus one page of slack that no row selects.
    const int64_t tokens = window ? first_position + num_rows : 2 * int64_t{width};
    source.num_pages = ceil_div(tokens, page_size) + 1;
  }
  const int64_t limit = source.num_pages * page_size;
  const PageMap map = random_page_map(rng, source.num_pages, page_size);

  source.index_row_stride = rng.chance(0.5) ? width : width + rng.uniform_int(1, 16);
  source.indices.assign(static_cast<size_t>(num_rows) * source.index_row_stride, 0);
  for (int r = 0; r < num_rows; ++r) {
    int32_t* row = source.indices.data() + r * source.index_row_stride;
    if (window) {
      fill_window_row(map, first_position + r, width, row);
    } else {
      fill_top_k_row(rng, map, limit, width, row);
    }
    corrupt_row(rng, spec.invalid_fraction, limit, width, row);
  }
  source.lengths.clear();
  if (spec.with_lengths) {
    for (int r = 0; r < num_rows; ++r) {
      source.lengths.push_back(random_length(rng, width, spec.allow_empty_rows));
    }
  }
}

void make_block_table(Rng& rng, const smla_source_desc& desc, const SourceSpec& spec,
                      const smla_varlen& varlen, bool poison, HostSource& source) {
  // The columns each request's rows read: through its last row's window or prefix.
  std::vector<int64_t> columns(varlen.num_requests, 0);
  int64_t total_columns = 0, widest = 1;
  for (int b = 0; b < varlen.num_requests; ++b) {
    if (varlen.cu_seqlens_q[b + 1] == varlen.cu_seqlens_q[b]) continue;
    const int64_t tokens = varlen.kv_lens[b];
    const int64_t entries = desc.kind == SMLA_SOURCE_PREFIX
                                ? std::min<int64_t>(tokens / desc.ratio, desc.width)
                                : tokens;
    columns[b] = ceil_div(entries, desc.page_size);
    total_columns += columns[b];
    widest = std::max(widest, columns[b]);
  }
  const bool slack = spec.num_pages == 0;
  source.num_pages = slack ? total_columns + 1 : spec.num_pages;
  std::vector<int64_t> pages(source.num_pages);
  for (int64_t p = 0; p < source.num_pages; ++p) pages[p] = p;
  rng.shuffle(pages);
  const int64_t usable = slack ? source.num_pages - 1 : source.num_pages;
  const int32_t trap_page = slack && poison ? static_cast<int32_t>(pages.back()) : kInt32Max;

  source.index_row_stride = widest + (rng.chance(0.5) ? 0 : rng.uniform_int(1, 4));
  source.indices.assign(static_cast<size_t>(varlen.num_requests) * source.index_row_stride, 0);
  source.lengths.clear();
  int64_t next = 0;
  for (int b = 0; b < varlen.num_requests; ++b) {
    int32_t* row = source.indices.data() + b * source.index_row_stride;
    for (int64_t c = 0; c < source.index_row_stride; ++c) {
      if (c >= columns[b]) {
        row[c] = rng.chance(0.5) ? trap_page : kInt32Max;
      } else if (rng.chance(spec.invalid_fraction)) {
        row[c] = invalid_index(rng, source.num_pages);
      } else {
        row[c] = static_cast<int32_t>(pages[next++ % usable]);
      }
    }
  }
}

void make_row_empty(const smla_source_desc& desc, int row, HostSource& source) {
  if (!source.lengths.empty()) {
    source.lengths[row] = 0;
    return;
  }
  std::fill_n(source.indices.begin() + row * source.index_row_stride, desc.width, -1);
}

std::vector<bool> selected_tokens(const smla_source_desc& desc, int num_rows,
                                  const HostSource& source) {
  const int64_t limit = source.num_pages * desc.page_size;
  std::vector<bool> selected(limit, false);
  for (int r = 0; r < num_rows; ++r) {
    const int32_t* row = source.indices.data() + r * source.index_row_stride;
    for (int64_t c = 0; c < row_length(desc, source, r); ++c) {
      if (row[c] >= 0 && row[c] < limit) selected[row[c]] = true;
    }
  }
  return selected;
}

std::vector<bool> selected_structured_tokens(const smla_source_desc& desc,
                                             const smla_varlen& varlen, int num_rows,
                                             const HostSource& source) {
  smla_source_args table{};
  table.num_pages = source.num_pages;
  table.indices = source.indices.data();
  table.index_row_stride = source.index_row_stride;
  std::vector<bool> selected(source.num_pages * desc.page_size, false);
  for (int r = 0; r < num_rows; ++r) {
    const StructuredSpan span = structured_span(desc, varlen, r);
    for (int64_t e = span.first; e < span.end; ++e) {
      const int64_t token = block_table_entry(desc, table, span.request, e);
      if (token >= 0) selected[token] = true;
    }
  }
  return selected;
}

void place_traps(Rng& rng, const smla_source_desc& desc, int num_rows,
                 const std::vector<bool>& selected, bool poison, HostSource& source) {
  std::vector<int32_t> unselected;
  if (poison) {
    for (size_t t = 0; t < selected.size(); ++t) {
      if (!selected[t]) unselected.push_back(static_cast<int32_t>(t));
    }
  }
  auto trap = [&](int32_t& entry, bool keep_if_no_trap) {
    if (!unselected.empty() && rng.chance(0.5)) {
      entry = unselected[rng.uniform_int(0, static_cast<int64_t>(unselected.size()) - 1)];
    } else if (!keep_if_no_trap) {
      entry = kInt32Max;
    }
  };
  for (int r = 0; r < num_rows; ++r) {
    int32_t* row = source.indices.data() + r * source.index_row_stride;
    // Past the length: stale entries as a serving stack leaves them, some aimed at NaN slots.
    for (int64_t c = row_length(desc, source, r); c < desc.width; ++c) trap(row[c], true);
    // Past the width: garbage that only an over-reading implementation would see.
    for (int64_t c = desc.width; c < source.index_row_stride; ++c) trap(row[c], false);
  }
}

}  // namespace smla::ref
