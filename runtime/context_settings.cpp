#include "runtime/context_settings.h"

#include <cstdlib>

#include "support/environment.h"

namespace smla {

Status context_settings(const smla_options* options, Logger* log, ContextSettings* settings) {
  smla_options defaults;
  smla_options_init(&defaults);
  const smla_options& o = options ? *options : defaults;
  log->set_level(o.log_level);
  apply_log_environment(log);
  settings->log_level = log->level();
  settings->device = o.device;
  if (const char* path = std::getenv("SMLA_CACHE")) {
    settings->store.path = path;
  } else {
    settings->store.path = o.cache_path ? o.cache_path : default_cache_path();
  }
  if (const char* path = std::getenv("SMLA_SYSTEM_CACHE")) {
    settings->store.system_path = path;
  } else if (o.system_cache_path) {
    settings->store.system_path = o.system_cache_path;
  }
  settings->jit_allowed = env_switch("SMLA_JIT", *log).value_or(o.jit == SMLA_JIT_ALLOW);
  settings->arch = o.arch ? o.arch : "";
  if (std::getenv("SMLA_BATCH_INVARIANT") != nullptr) {
    log->warn("ignoring SMLA_BATCH_INVARIANT: the switch is SMLA_BATCH_VARIANT=0|1");
  }
  settings->plan.batch_variant =
      env_switch("SMLA_BATCH_VARIANT", *log).value_or(o.batch_variant != 0);
  settings->use_tuning = env_switch("SMLA_TUNING", *log).value_or(true);
  if (const char* forced = std::getenv("SMLA_TILE")) {
    settings->plan.forced_tile = TileConfig::parse(forced);
    if (!settings->plan.forced_tile) {
      return error(SMLA_ERR_INVALID_ARGUMENT, "SMLA_TILE = \"{}\": not a tile configuration",
                   forced);
    }
  }
  return ok_status();
}

}  // namespace smla
