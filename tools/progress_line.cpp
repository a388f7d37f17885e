#include "tools/progress_line.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace smla::tools {
namespace {

constexpr int kBarWidth = 30;

}  // namespace

ProgressLine::ProgressLine() : enabled_(isatty(STDERR_FILENO) == 1) {}

ProgressLine::~ProgressLine() {
  if (drawn_) std::fputc('\n', stderr);  // not fmt::print, which may throw
}

void ProgressLine::draw(const BuildCounts& counts) {
  if (!enabled_) return;
  const int filled = counts.total > 0 ? kBarWidth * counts.done() / counts.total : kBarWidth;
  std::string bar(kBarWidth, ' ');
  for (int i = 0; i < filled; ++i) bar[i] = '=';
  if (filled < kBarWidth) bar[filled] = '>';
  // \x1b[K clears what a longer earlier line left behind. The cursor is left at the start of
  // the line, so a warning the builder logs meanwhile overwrites the bar instead of trailing it.
  fmt::print(stderr, "\r[{}] {}/{} compiled {} cached {} failed {}\x1b[K\r", bar, counts.done(),
             counts.total, counts.compiled, counts.cached, counts.failed);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace smla::tools
