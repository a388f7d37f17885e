// get_or_compile compiles a missing kernel once, stores it, and serves it from the file after.
#include <gtest/gtest.h>

#include "cpu/cache/cache_test_support.h"
#include "support/store_reads.h"

namespace smla::cache_test {
namespace {

TEST(CubinStoreGetOrCompile, CompilesOnceThenServesTheStoredCubin) {
  TempDir dir;
  Logger log;
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(dir.file("cache.sqlite")), log);
  ASSERT_TRUE(store->persistent());
  EXPECT_EQ(store->path(), dir.file("cache.sqlite"));

  std::atomic<int> calls{0};
  EXPECT_FALSE(store->find(test_entry(0).id).has_value());
  {
    std::vector<uint8_t> cubin;
    bool compiled = false;
    ASSERT_TRUE(
        store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin, &compiled));
    EXPECT_TRUE(compiled);
    EXPECT_EQ(cubin, test_cubin(0));
    EXPECT_EQ(calls, 1);
  }
  {
    std::vector<uint8_t> cubin;
    bool compiled = true;
    ASSERT_TRUE(
        store->get_or_compile(test_entry(0), counting_compile(0, &calls), &cubin, &compiled));
    EXPECT_FALSE(compiled);
    EXPECT_EQ(cubin, test_cubin(0));
    EXPECT_EQ(calls, 1);
  }
  {
    std::optional<std::vector<uint8_t>> found = store->find(test_entry(0).id);
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(*found, test_cubin(0));
  }
  {
    // Kernels are independent; an empty cubin is stored as bytes like any other.
    std::vector<uint8_t> cubin;
    ASSERT_TRUE(store->get_or_compile(test_entry(1), counting_compile(1, &calls, 0), &cubin));
    EXPECT_TRUE(cubin.empty());
    EXPECT_EQ(calls, 2);
    ASSERT_TRUE(store->find(test_entry(1).id).has_value());
    EXPECT_EQ(*store->find(test_entry(0).id), test_cubin(0));
  }
  {
    std::vector<KernelEntry> entries = test::listed(*store);
    ASSERT_EQ(entries.size(), 2u);
    const KernelEntry& first = entries[0];  // listed by key text
    EXPECT_EQ(first.id, test_entry(0).id);
    EXPECT_EQ(first.key_text, test_entry(0).key_text);
    EXPECT_EQ(first.arch, "sm_90a");
    EXPECT_EQ(first.fingerprint, "fp-test");
    EXPECT_EQ(first.cubin_bytes, 4096);
    EXPECT_DOUBLE_EQ(first.compile_ms, 1.5);
    EXPECT_EQ(first.origin, "user");
    EXPECT_GT(first.created, 0);
    EXPECT_EQ(entries[1].cubin_bytes, 0);
  }
  {
    StoreStats stats = test::stats_of(*store);
    EXPECT_EQ(stats.kernels, 2);
    EXPECT_EQ(stats.cubin_bytes, 4096);
    EXPECT_TRUE(stats.persistent);
    EXPECT_EQ(stats.path, dir.file("cache.sqlite"));
    EXPECT_GT(stats.file_bytes, 4096);
  }
  EXPECT_EQ(sql_int(dir.file("cache.sqlite"), "SELECT count(*) FROM leases"), 0);
}

TEST(CubinStoreGetOrCompile, ReturnsTheCompilerErrorAndStoresNothing) {
  TempDir dir;
  Logger log;
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(dir.file("cache.sqlite")), log);
  std::vector<uint8_t> cubin;
  bool compiled = true;
  Status status = store->get_or_compile(
      test_entry(0),
      [](std::vector<uint8_t>*, double*) { return error(SMLA_ERR_COMPILE, "nvrtc: boom"); }, &cubin,
      &compiled);
  EXPECT_EQ(status.code(), SMLA_ERR_COMPILE);
  EXPECT_EQ(status.message(), "nvrtc: boom");
  EXPECT_FALSE(compiled);
  EXPECT_FALSE(store->find(test_entry(0).id).has_value());
  EXPECT_TRUE(test::listed(*store).empty());
}

}  // namespace
}  // namespace smla::cache_test
