#include "cache/cubin_store.h"

#include <cstdlib>
#include <exception>
#include <new>
#include <utility>

#include "cache/layered_store.h"
#include "cache/memory_store.h"
#include "cache/sqlite_store.h"

namespace smla {

std::unique_ptr<CubinStore> CubinStore::open(const Options& options, const Logger& log) {
  std::unique_ptr<CubinStore> user;
  if (!options.path.empty()) {
    Status status = SqliteCubinStore::open(options, log, &user);
    if (!status) {
      log.warn("cache {}: {}; keeping kernels in memory only", options.path, status.message());
    }
  }
  if (user == nullptr) user = std::make_unique<MemoryCubinStore>();
  if (options.system_path.empty()) return user;

  std::unique_ptr<SqliteDb> system;
  Status status =
      LayeredCubinStore::open_system_cache(options.system_path, options.busy_timeout_ms, &system);
  if (!status) {
    log.warn("system cache {}: {}; not consulted", options.system_path, status.message());
    return user;
  }
  return std::make_unique<LayeredCubinStore>(std::move(system), std::move(user), log);
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
