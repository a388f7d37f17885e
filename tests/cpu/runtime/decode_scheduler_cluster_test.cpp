// Cluster folds (DecodeScheduler's cluster_fold): a split call's (row, head group) segments form
// one cluster that folds their partials, so the call launches no combine kernel; everything else
// plans as with the combine kernel, the workspace too (a context whose device cannot run the
// cluster falls back to it). Rows of more than kMaxClusterSize segments fold in the combine
// kernel; SMLA_CLUSTER_FOLD=0 turns cluster folds off.
#include <gtest/gtest.h>

#include "decode_scheduler_keys.h"
#include "runtime/decode_scheduler.h"
#include "support/scoped_env.h"

namespace smla {
namespace {

TEST(DecodeSchedulerCluster, SplitCallsFoldInClustersOfTheirSegments) {
  for (const KernelKey& key : scheduler_test::scheduler_keys()) {
    SCOPED_TRACE(key.text());
    const DecodeScheduler combine(key);
    const DecodeScheduler cluster(key, {}, 0, true);
    const int segments = key.geometry().segments;
    const bool fits = segments <= DecodeScheduler::kMaxClusterSize;
    for (int rows : {1, 2, 7, 64, 96, 97, 1000}) {
      SCOPED_TRACE(rows);
      const DecodeLaunch with = cluster.plan(rows);
      const DecodeLaunch without = combine.plan(rows);
      EXPECT_EQ(without.cluster_size, 0);
      ASSERT_EQ(with.split, without.split);
      EXPECT_EQ(with.decode_blocks, without.decode_blocks);
      EXPECT_EQ(with.workspace_bytes, without.workspace_bytes);
      if (with.split && fits) {
        EXPECT_EQ(with.cluster_size, segments);
        EXPECT_EQ(with.decode_blocks % segments, 0);
        EXPECT_EQ(with.combine_blocks, 0);
      } else {
        EXPECT_EQ(with.cluster_size, 0);
        EXPECT_EQ(with.combine_blocks, without.combine_blocks);
      }
    }
    EXPECT_EQ(cluster.workspace_bytes(1024), combine.workspace_bytes(1024));
  }
}

TEST(DecodeSchedulerCluster, OnUnlessTheEnvironmentSaysZero) {
  {
    test::ScopedEnv unset("SMLA_CLUSTER_FOLD", nullptr);
    EXPECT_TRUE(cluster_fold_mode());
  }
  {
    test::ScopedEnv off("SMLA_CLUSTER_FOLD", "0");
    EXPECT_FALSE(cluster_fold_mode());
  }
  {
    test::ScopedEnv on("SMLA_CLUSTER_FOLD", "1");
    EXPECT_TRUE(cluster_fold_mode());
  }
}

}  // namespace
}  // namespace smla
