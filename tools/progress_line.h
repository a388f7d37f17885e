// The progress bar of `smla cache build`: one line on stderr, redrawn in place,
// `[=====>    ] 12/40 compiled 9 cached 3 failed 0`. Drawn only when stderr is a terminal, so
// logs and pipes get nothing but the summary.
#pragma once

#include "tools/parallel_build.h"

namespace smla::tools {

class ProgressLine {
 public:
  ProgressLine();
  ~ProgressLine();  // ends the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void draw(const BuildCounts& counts);

 private:
  bool enabled_ = false;
  bool drawn_ = false;
};

}  // namespace smla::tools
