#include "runtime/decode_dispatch.h"

#include <algorithm>

namespace smla {

DecodeDispatch::DecodeDispatch(const std::string& arch, const smla_problem& problem,
                               const DecodeTiles& tiles, const std::vector<TunedTile>& tuned)
    : heuristic_(KernelKey::decode(arch, problem, tiles.tile), tiles.narrow, tiles.fast),
      tuned_(tuned) {
  for (const TunedTile& t : tuned_) {
    tuned_schedulers_.emplace_back(KernelKey::decode(arch, problem, t.tile));
  }
}

DecodeChoice DecodeDispatch::choose(int num_rows, size_t workspace_bytes) const {
  const int bucket = batch_bucket(num_rows);
  for (size_t i = 0; i < tuned_.size(); ++i) {
    if (tuned_[i].bucket != bucket) continue;
    DecodeChoice choice{tuned_schedulers_[i].plan(num_rows), static_cast<int>(i)};
    const size_t fits = std::min(heuristic_.workspace_bytes(num_rows), workspace_bytes);
    if (choice.launch.workspace_bytes <= fits) return choice;
    break;
  }
  return {heuristic_.plan(num_rows), -1};
}

}  // namespace smla
