#include "tools/cache_file_option.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "cache/file_verify.h"
#include "cache/layered_store.h"
#include "cache/memory_store.h"

namespace smla::tools {

void CacheFileOption::add_to(CLI::App& command) {
  option_ = command.add_option("--cache", value_,
                               "cache file (default: $SMLA_CACHE, else ~/.cache/smla/cache.sqlite; "
                               "\"\" = memory only)");
}

std::string CacheFileOption::path() const {
  // NOTE: the option's count, not its value, decides: `--cache ""` asks for memory only.
  if (option_ != nullptr && option_->count() > 0) return value_;
  if (const char* path = std::getenv("SMLA_CACHE")) return path;
  return default_cache_path();
}

std::unique_ptr<CubinStore> CacheFileOption::open(const Logger& log) const {
  CubinStore::Options options;
  options.path = path();
  return CubinStore::open(options, log);
}

namespace {

// After the store's warning, which says why.
void print_not_usable(const char* command, const std::string& file) {
  fmt::print(stderr, "smla cache {}: {} is not usable (the cache is memory only)\n", command, file);
}

}  // namespace

std::unique_ptr<CubinStore> CacheFileOption::open_existing(const char* command,
                                                           const Logger& log) const {
  const std::string file = path();
  std::error_code ec;
  if (!file.empty() && !std::filesystem::exists(file, ec)) {
    log.warn("cache {}: no such file (nothing is created; the cache is empty)", file);
    return CubinStore::open(CubinStore::Options(), log);
  }
  if (read_only()) {
    // Read as a system cache is: immutable, over an empty memory store.
    std::unique_ptr<SqliteDb> db;
    const Status opened =
        LayeredCubinStore::open_system_cache(file, CubinStore::Options().busy_timeout_ms, &db);
    if (opened) {
      return std::make_unique<LayeredCubinStore>(std::move(db),
                                                 std::make_unique<MemoryCubinStore>(), log);
    }
    log.warn("cache {}: {}", file, opened.message());
  } else {
    std::unique_ptr<CubinStore> store = open(log);
    if (file.empty() || store->persistent()) return store;
  }
  print_not_usable(command, file);
  return nullptr;
}

bool CacheFileOption::read_only() const {
  const std::string file = path();
  std::error_code ec;
  return !file.empty() && std::filesystem::exists(file, ec) && !may_write_cache_file(file);
}

std::string CacheFileOption::existing_file(const char* command) const {
  std::string file = path();
  std::error_code ec;
  if (!file.empty() && std::filesystem::exists(file, ec)) return file;
  fmt::print(stderr, "smla cache {}: no cache file {}(the cache is memory only)\n", command,
             file.empty() ? "" : "at " + file + " ");
  return "";
}

std::unique_ptr<CubinStore> CacheFileOption::open_usable(const char* command,
                                                         const Logger& log) const {
  const std::string file = existing_file(command);
  if (file.empty()) return nullptr;
  std::unique_ptr<CubinStore> store = open(log);
  if (store->persistent()) return store;
  print_not_usable(command, file);
  return nullptr;
}

}  // namespace smla::tools
