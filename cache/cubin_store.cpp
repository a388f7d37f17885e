#include "cache/cubin_store.h"

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <new>
#include <system_error>
#include <utility>

#include "cache/file_verify.h"
#include "cache/layered_store.h"
#include "cache/memory_store.h"
#include "cache/sqlite_store.h"

namespace smla {

namespace {

// The user cache file: read-write, read-only (this user may not write it: a file prepared by
// another user, a read-only mount), or, when it cannot be used at all, memory.
std::unique_ptr<CubinStore> open_user_cache(const CubinStore::Options& options, const Logger& log,
                                            Status* file_status) {
  std::unique_ptr<CubinStore> user;
  std::error_code ec;
  if (std::filesystem::exists(options.path, ec) && !may_write_cache_file(options.path)) {
    std::unique_ptr<SqliteDb> db;
    *file_status = LayeredCubinStore::open_read_only(options.path, options.busy_timeout_ms, &db);
    if (*file_status) {
      log.warn(
          "cache {}: this user may not write it; using it read-only (kernels not in it are "
          "compiled into memory only)",
          options.path);
      return std::make_unique<LayeredCubinStore>(std::move(db), "cache", "user",
                                                 std::make_unique<MemoryCubinStore>(), log);
    }
  } else {
    *file_status = SqliteCubinStore::open(options, log, &user);
    if (*file_status) return user;
  }
  log.warn("cache {}: {}; keeping kernels in memory only", options.path, file_status->message());
  return std::make_unique<MemoryCubinStore>();
}

}  // namespace

std::unique_ptr<CubinStore> CubinStore::open(const Options& options, const Logger& log,
                                             Status* file_status) {
  Status file = ok_status();
  std::unique_ptr<CubinStore> user = options.path.empty() ? std::make_unique<MemoryCubinStore>()
                                                          : open_user_cache(options, log, &file);
  if (file_status != nullptr) *file_status = file;
  if (options.system_path.empty()) return user;

  std::unique_ptr<SqliteDb> system;
  Status status =
      LayeredCubinStore::open_read_only(options.system_path, options.busy_timeout_ms, &system);
  if (!status) {
    log.warn("system cache {}: {}; not consulted", options.system_path, status.message());
    return user;
  }
  return std::make_unique<LayeredCubinStore>(std::move(system), "system cache", "system",
                                             std::move(user), log);
}

Status run_compile(const CompileFn& compile, std::vector<uint8_t>* cubin, double* compile_ms) {
  try {
    return compile(cubin, compile_ms);
  } catch (const std::bad_alloc&) {
    return Status(SMLA_ERR_INTERNAL, "compiling: out of host memory");
  } catch (const std::exception& e) {
    return error(SMLA_ERR_INTERNAL, "compiling: {}", e.what());
  } catch (...) {
    return Status(SMLA_ERR_INTERNAL, "compiling: an unknown exception");
  }
}

std::string default_cache_path() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  // The XDG spec says a relative XDG_CACHE_HOME is invalid and must be ignored.
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/smla/cache.sqlite";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return std::string(home) + "/.cache/smla/cache.sqlite";
  return "";
}

}  // namespace smla
