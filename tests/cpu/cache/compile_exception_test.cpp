// A compile that throws (std::bad_alloc from NVRTC's log, say) is an SMLA_ERR_INTERNAL status
// like any failed compile: the memory store's waiters are woken and the file store's lease is
// released, so the next caller compiles at once instead of waiting forever (memory) or for the
// lease timeout (file).
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <new>
#include <stdexcept>
#include <thread>

#include "cpu/cache/cache_test_support.h"

namespace smla::cache_test {
namespace {

Status throwing_compile(std::vector<uint8_t>*, double*) { throw std::bad_alloc(); }
Status throwing_runtime_error(std::vector<uint8_t>*, double*) {
  throw std::runtime_error("nvrtc log too long");
}

// The next get_or_compile of kernel 0 after a throwing one: it must compile, within seconds.
void expect_next_call_compiles(std::unique_ptr<CubinStore> store) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  auto done = std::make_shared<std::promise<bool>>();
  std::future<bool> result = done->get_future();
  CubinStore* raw = store.get();
  std::thread([raw, calls, done] {
    std::vector<uint8_t> cubin;
    bool compiled = false;
    const Status status =
        raw->get_or_compile(test_entry(0), counting_compile(0, calls.get()), &cubin, &compiled);
    done->set_value(status.is_ok() && compiled && cubin == test_cubin(0));
  }).detach();
  if (result.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    ADD_FAILURE() << "the call after a throwing compile is still waiting after 20 s";
    store.release();  // the waiting thread still uses it
    return;
  }
  EXPECT_TRUE(result.get());
  EXPECT_EQ(*calls, 1);
}

TEST(CubinStoreCompileException, MemoryStoreWakesItsWaiters) {
  Logger log;
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(""), log);
  std::vector<uint8_t> cubin;
  const Status status = store->get_or_compile(test_entry(0), throwing_compile, &cubin);
  EXPECT_EQ(status.code(), SMLA_ERR_INTERNAL);
  EXPECT_NE(status.message().find("out of host memory"), std::string::npos) << status.message();
  expect_next_call_compiles(std::move(store));
}

TEST(CubinStoreCompileException, FileStoreReleasesItsLease) {
  TempDir dir;
  const std::string path = dir.file("cache.sqlite");
  Logger log;
  std::unique_ptr<CubinStore> store = CubinStore::open(options_for(path), log);
  std::vector<uint8_t> cubin;
  const Status status = store->get_or_compile(test_entry(0), throwing_runtime_error, &cubin);
  EXPECT_EQ(status.code(), SMLA_ERR_INTERNAL);
  EXPECT_NE(status.message().find("nvrtc log too long"), std::string::npos) << status.message();
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM leases"), 0);
  EXPECT_EQ(sql_int(path, "SELECT count(*) FROM kernels"), 0);
  expect_next_call_compiles(std::move(store));
}

}  // namespace
}  // namespace smla::cache_test
