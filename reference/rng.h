// The random draws of random_case: std::mt19937_64 with the distributions written out here,
// because the standard library's distributions are implementation-defined and a seed must give
// the same case with any standard library.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace smla::ref {

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}

  // Uniform in [0, 1), 53 bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  double uniform(double low, double high) { return low + (high - low) * uniform(); }
  // Uniform in [low, high] (both included); the modulo bias is irrelevant at these ranges.
  int64_t uniform_int(int64_t low, int64_t high) {
    return low + static_cast<int64_t>(engine_() % static_cast<uint64_t>(high - low + 1));
  }
  bool chance(double probability) { return uniform() < probability; }
  // Standard normal (Box-Muller; 1 - u keeps the logarithm's argument in (0, 1]).
  double normal() {
    const double radius = std::sqrt(-2.0 * std::log(1.0 - uniform()));
    return radius * std::cos(6.283185307179586 * uniform());
  }
  template <typename T>
  void shuffle(std::vector<T>& values) {
    for (size_t i = values.size(); i > 1; --i) {
      std::swap(values[i - 1], values[uniform_int(0, static_cast<int64_t>(i) - 1)]);
    }
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace smla::ref
