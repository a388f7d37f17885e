// The index side of random_case: pool sizes, index tables, lengths, which cache slots the rows
// select, and the traps placed where a correct implementation never reads.
#pragma once

#include <smla.h>

#include <cstdint>
#include <vector>

#include "reference/random_case.h"
#include "reference/rng.h"

namespace smla::ref {

// Fills num_pages, index_row_stride, indices and lengths of `source` (not the cache). Source 0
// looks like the sliding window, source 1 like the compressed top-k. Columns past the width are
// left for place_traps.
void make_source_tables(Rng& rng, int source_number, const smla_source_desc& desc,
                        const SourceSpec& spec, int num_rows, HostSource& source);

// Fills num_pages, index_row_stride and indices (the block table) of a window or prefix source
// for the requests of `varlen`; lengths stay empty. Each request's pages are scattered over the
// pool, a page number is invalid with probability invalid_fraction (as invalid_index draws
// them), and the columns past a request's last page are traps: the pool's slack page, which no
// row selects (when `poison`), or 0x7fffffff.
void make_block_table(Rng& rng, const smla_source_desc& desc, const SourceSpec& spec,
                      const smla_varlen& varlen, bool poison, HostSource& source);

// Leaves `row` of this source without a valid entry: length 0, or every column invalid when the
// source has no lengths.
void make_row_empty(const smla_source_desc& desc, int row, HostSource& source);

// selected[t] is true iff some row has a valid entry pointing at physical token t.
std::vector<bool> selected_tokens(const smla_source_desc& desc, int num_rows,
                                  const HostSource& source);

// The same for a window or prefix source, whose rows read through the block table.
std::vector<bool> selected_structured_tokens(const smla_source_desc& desc,
                                             const smla_varlen& varlen, int num_rows,
                                             const HostSource& source);

// Fills the columns past each row's length and past the width: half of them (when `poison` and
// some slot is unselected) point at unselected, NaN-poisoned slots, the rest are 0x7fffffff.
// Selection does not change: these columns are never valid.
void place_traps(Rng& rng, const smla_source_desc& desc, int num_rows,
                 const std::vector<bool>& selected, bool poison, HostSource& source);

}  // namespace smla::ref
