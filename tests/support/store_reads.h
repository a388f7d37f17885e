// A store's maintenance calls as values, for tests: a failing call fails the test (with the
// store's message) and yields an empty result.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cache/cubin_store.h"

namespace smla::test {

inline std::vector<KernelEntry> listed(CubinStore& store) {
  std::vector<KernelEntry> entries;
  const Status status = store.list(&entries);
  EXPECT_TRUE(status) << status.message();
  return entries;
}

inline StoreStats stats_of(CubinStore& store) {
  StoreStats stats;
  const Status status = store.stats(&stats);
  EXPECT_TRUE(status) << status.message();
  return stats;
}

inline GcReport collected(CubinStore& store, int64_t max_bytes, const std::string& fingerprint) {
  GcReport report;
  const Status status = store.gc(max_bytes, fingerprint, &report);
  EXPECT_TRUE(status) << status.message();
  return report;
}

}  // namespace smla::test
