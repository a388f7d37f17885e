// Window and prefix sources read as the per-row lists they stand for (docs/semantics.md,
// "Structured sources"): the oracle's reading of the varlen rule, written from the semantics and
// not from a kernel.
#pragma once

#include <smla.h>

#include <cstdint>
#include <vector>

#include "reference/attention.h"

namespace smla::ref {

// Row `row` (a row of request `request`, at position `position`) reads the logical entries
// [first, end) of a window or prefix source: a window the tokens max(0, pos - W + 1) .. pos, a
// prefix the compressed entries 0 .. min(floor((pos + 1) / ratio), width) - 1.
struct StructuredSpan {
  int request = 0;
  int64_t position = 0;
  int64_t first = 0;
  int64_t end = 0;
};
StructuredSpan structured_span(const smla_source_desc& desc, const smla_varlen& varlen, int row);

// The physical index of logical entry `entry` of `request` through the source's block table,
// or -1 where the table's page number is outside [0, num_pages) (such entries are skipped).
int64_t block_table_entry(const smla_source_desc& desc, const smla_source_args& source, int request,
                          int64_t entry);

// A call whose sources may be window or prefix sources, rewritten as the list call it means:
// each structured source becomes per-row lists, oldest entry first, with per-row lengths; list
// sources are kept. Its arguments point into it, so it is neither copied nor moved.
class ListCall {
 public:
  ListCall(const smla_problem& problem, const smla_args& args, const smla_varlen& varlen);
  ListCall(const ListCall&) = delete;
  ListCall& operator=(const ListCall&) = delete;

  const smla_problem& problem() const { return problem_; }
  const smla_args& args() const { return args_; }

 private:
  smla_problem problem_;
  smla_args args_;
  std::vector<int32_t> indices_[SMLA_MAX_SOURCES];
  std::vector<int32_t> lengths_[SMLA_MAX_SOURCES];
};

// attention() of a call with a varlen description (NULL: list sources only).
ReferenceResult varlen_attention(const smla_problem& problem, const smla_args& args,
                                 const smla_varlen* varlen, int threads = 0);

}  // namespace smla::ref
