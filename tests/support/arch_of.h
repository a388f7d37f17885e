// The arch table's row of a name the test spells out (a typo ends the test binary: it is the
// test that is wrong).
#pragma once

#include <cstdio>
#include <cstdlib>

#include "codegen/arch.h"

namespace smla::test {

inline const ArchSpec& arch_of(const char* name) {
  const ArchSpec* arch = find_arch(name);
  if (arch == nullptr) {
    std::fprintf(stderr, "no arch %s in the table\n", name);
    std::abort();
  }
  return *arch;
}

}  // namespace smla::test
