// The combine kernel family: the kernel that folds a split call's partials (one CTA per row and
// head) into out and the lse. Its fields, canonical text, prologue, template
// (combine_kernel.cuh), entry points and threads.
#pragma once

#include <string>

#include "codegen/arch.h"

namespace smla {

struct CombineKernel {
  const ArchSpec* arch = nullptr;
  int heads = 0;
  int heads_per_cta = 0;  // of the decode kernel whose partials it folds
  int segments = 0;       // a row's segments in that kernel
  bool sink = false;
  bool lse = false;

  // "family=combine;arch=sm_90a;heads=16;hg=16;segments=9;sink=1;lse=0"
  std::string text() const;
  std::string prologue() const;
  static constexpr const char* kTemplate = "combine_kernel.cuh";
  // Plain splits; prefix calls (a row's first item folds several segments).
  static constexpr const char* kEntryPoint = "smla_combine";
  static constexpr const char* kPrefixEntryPoint = "smla_combine_prefix";
  int threads() const;
};

}  // namespace smla
