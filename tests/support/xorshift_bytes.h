// Deterministic test bytes (cubins of test kernels, fuzz seed files): a xorshift64 sequence
// seeded by `index`, so that each kernel of a test has its own reproducible content.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace smla::test {

inline std::vector<uint8_t> xorshift_bytes(int index, size_t count) {
  std::vector<uint8_t> bytes(count);
  uint64_t state = 0x2545F4914F6CDD1Dull ^ static_cast<uint64_t>(index + 1);
  for (uint8_t& byte : bytes) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    byte = static_cast<uint8_t>(state);
  }
  return bytes;
}

}  // namespace smla::test
