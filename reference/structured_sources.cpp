#include "reference/structured_sources.h"

#include <algorithm>

namespace smla::ref {

StructuredSpan structured_span(const smla_source_desc& desc, const smla_varlen& varlen, int row) {
  // The request whose rows [cu[b], cu[b + 1]) hold `row`: the last b with cu[b] <= row.
  const int32_t* cu = varlen.cu_seqlens_q;
  const int request =
      static_cast<int>(std::upper_bound(cu, cu + varlen.num_requests + 1, row) - cu) - 1;
  StructuredSpan span;
  span.request = request;
  const int64_t new_rows = cu[request + 1] - cu[request];
  span.position = int64_t{varlen.kv_lens[request]} - new_rows + (row - cu[request]);
  if (desc.kind == SMLA_SOURCE_WINDOW) {
    span.first = std::max<int64_t>(0, span.position - desc.width + 1);
    span.end = span.position + 1;
  } else {
    span.end = std::min<int64_t>((span.position + 1) / desc.ratio, desc.width);
  }
  return span;
}

int64_t block_table_entry(const smla_source_desc& desc, const smla_source_args& source, int request,
                          int64_t entry) {
  const int64_t column = entry / desc.page_size;
  if (column >= source.index_row_stride) return -1;
  const int64_t page = source.indices[request * source.index_row_stride + column];
  if (page < 0 || page >= source.num_pages) return -1;
  return page * desc.page_size + entry % desc.page_size;
}

ListCall::ListCall(const smla_problem& problem, const smla_args& args, const smla_varlen& varlen)
    : problem_(problem), args_(args) {
  const int rows = args.num_rows;
  for (int s = 0; s < problem.num_sources; ++s) {
    smla_source_desc& desc = problem_.sources[s];
    if (desc.kind == SMLA_SOURCE_LIST) continue;
    const int width = desc.width;
    indices_[s].assign(static_cast<size_t>(rows) * width, -1);
    lengths_[s].assign(rows, 0);
    for (int r = 0; r < rows; ++r) {
      const StructuredSpan span = structured_span(desc, varlen, r);
      for (int64_t e = span.first; e < span.end; ++e) {
        indices_[s][static_cast<size_t>(r) * width + (e - span.first)] =
            static_cast<int32_t>(block_table_entry(desc, args.sources[s], span.request, e));
      }
      lengths_[s][r] = static_cast<int32_t>(std::max<int64_t>(0, span.end - span.first));
    }
    desc = {SMLA_SOURCE_LIST, desc.page_size, width, 0};
    args_.sources[s].indices = indices_[s].data();
    args_.sources[s].index_row_stride = width;
    args_.sources[s].lengths = lengths_[s].data();
  }
}

ReferenceResult varlen_attention(const smla_problem& problem, const smla_args& args,
                                 const smla_varlen* varlen, int threads) {
  if (varlen == nullptr || args.num_rows == 0) return attention(problem, args, threads);
  const ListCall list(problem, args, *varlen);
  return attention(list.problem(), list.args(), threads);
}

}  // namespace smla::ref
