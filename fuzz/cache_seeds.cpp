// Writes fuzz_cache_file's seed corpus (fuzz/corpus/fuzz_cache_file): real cache files made
// through CubinStore, with the kernels and tuning row of cache_entries.h.
//   fuzz_cache_seeds DIR
#include <cstdio>
#include <filesystem>
#include <string>

#include "cache_entries.h"

namespace smla::fuzz {
namespace {

// A cache file at `path` holding the first `kernels` seed kernels, and the tuning row if asked.
bool write_seed(const std::string& path, int kernels, bool tuning) {
  std::filesystem::remove(path);
  const Logger log;
  CubinStore::Options options;
  options.path = path;
  Status file_status;
  std::unique_ptr<CubinStore> store = CubinStore::open(options, log, &file_status);
  if (!file_status || !store->persistent()) {
    std::fprintf(stderr, "fuzz_cache_seeds: %s: %s\n", path.c_str(), file_status.message().c_str());
    return false;
  }
  for (int i = 0; i < kernels; ++i) {
    const CompileFn compile = [i](std::vector<uint8_t>* cubin, double* compile_ms) {
      *cubin = seed_cubin(i);
      *compile_ms = 10.0 * (i + 1);
      return ok_status();
    };
    std::vector<uint8_t> cubin;
    const Status status = store->get_or_compile(seed_entry(i), compile, &cubin);
    if (!status) {
      std::fprintf(stderr, "fuzz_cache_seeds: %s: %s\n", path.c_str(), status.message().c_str());
      return false;
    }
  }
  if (tuning) {
    const Status status = store->put_tuning(seed_tuning_row());
    if (!status) {
      std::fprintf(stderr, "fuzz_cache_seeds: %s: %s\n", path.c_str(), status.message().c_str());
      return false;
    }
  }
  store.reset();  // the last connection folds the WAL into the file
  std::filesystem::remove(path + "-leases");
  return true;
}

}  // namespace
}  // namespace smla::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_cache_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  using smla::fuzz::kSeedKernels;
  using smla::fuzz::write_seed;
  const bool ok = write_seed(dir + "/empty.sqlite", 0, false) &&
                  write_seed(dir + "/one-kernel.sqlite", 1, false) &&
                  write_seed(dir + "/kernels-and-tuning.sqlite", kSeedKernels, true);
  return ok ? 0 : 1;
}
