// Which schedule runs a decode call: the heuristic one (DecodeScheduler with the problem's
// splits), or the tuned tile of the call's batch bucket (autotune/tuning.h), alone, where its
// plan needs no more workspace than the heuristic's asks for up to that many rows, nor than the
// caller's workspace holds. So the workspace smla_prepare returns stays the heuristic's, a pure
// function of (problem, max_rows), whatever the tuning table holds; a call the heuristic's plan
// would serve is never refused for a tuned tile's (one of more rows than max_rows); and the
// choice depends on host-known values only (graph-safe).
#pragma once

#include <string>
#include <vector>

#include "autotune/tuning.h"
#include "runtime/decode_scheduler.h"

namespace smla {

struct DecodeChoice {
  DecodeLaunch launch;
  int tuned = -1;  // the tuned tile that runs (an index into the dispatch's), or -1
};

class DecodeDispatch {
 public:
  // `tuned`: one tile per bucket at most, by rising bucket (find_tuned_tiles' order).
  DecodeDispatch(const std::string& arch, const smla_problem& problem, const DecodeTiles& tiles,
                 const std::vector<TunedTile>& tuned);

  // `workspace_bytes`: what the caller gives the call.
  DecodeChoice choose(int num_rows, size_t workspace_bytes) const;
  size_t workspace_bytes(int max_rows) const { return heuristic_.workspace_bytes(max_rows); }
  const std::vector<TunedTile>& tuned() const { return tuned_; }

 private:
  DecodeScheduler heuristic_;
  std::vector<TunedTile> tuned_;
  std::vector<DecodeScheduler> tuned_schedulers_;  // each tuned tile alone
};

}  // namespace smla
