// The heuristic depends on the problem (and arch) alone: the same problem always gets the same tile
// (a row's floating-point order, and so its bits, must not change between calls), and q_len,
// which only multiplies the rows of a call, does not change it.
#include <gtest/gtest.h>

#include "autotune/heuristics.h"
#include "cpu/codegen/dsv4_problems.h"
#include "support/arch_of.h"

namespace smla {
namespace {

void check_pure(const test::NamedProblem& named) {
  SCOPED_TRACE(named.name);
  for (const ArchSpec& arch : arch_table()) {
    SCOPED_TRACE(arch.name);
    for (TileConfig (*heuristic)(const ArchSpec&, const smla_problem&) :
         {&default_tile, &mma_sync_tile}) {
      const TileConfig config = heuristic(arch, named.problem);
      EXPECT_EQ(heuristic(arch, named.problem).text(), config.text());
      smla_problem copy = named.problem;
      for (int q_len = 1; q_len <= SMLA_MAX_Q_LEN; ++q_len) {
        copy.q_len = q_len;
        EXPECT_EQ(heuristic(arch, copy).text(), config.text()) << "q_len " << q_len;
      }
    }
  }
}

TEST(DefaultTile, DependsOnTheProblemAndArchOnly) {
  for (const test::NamedProblem& named : test::dsv4_problems()) check_pure(named);
  for (int heads = 1; heads <= SMLA_MAX_HEADS; ++heads) {
    for (int width : {1, 512, 1024, 8192, SMLA_MAX_WIDTH}) {
      check_pure({"heads " + std::to_string(heads) + " width " + std::to_string(width),
                  test::dsv4_compressed_problem(heads, 64, width)});
    }
  }
}

}  // namespace
}  // namespace smla
