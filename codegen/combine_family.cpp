#include "codegen/combine_family.h"

#include <fmt/format.h>

#include "templates/decode_geometry.cuh"

namespace smla {

std::string CombineKernel::text() const {
  return fmt::format("family=combine;arch={};heads={};hg={};segments={};sink={};lse={}", arch->name,
                     heads, heads_per_cta, segments, sink ? 1 : 0, lse ? 1 : 0);
}

std::string CombineKernel::prologue() const {
  return fmt::format(
      "constexpr int kNumHeads = {};\n"
      "constexpr int kHeadsPerCta = {};\n"
      "constexpr int kSegments = {};\n"
      "constexpr bool kHasSink = {};\n"
      "constexpr bool kWantLse = {};\n",
      heads, heads_per_cta, segments, sink, lse);
}

int CombineKernel::threads() const { return combine_shape(segments).threads; }

}  // namespace smla
