// What a context runs with: the host's options with the operator's environment switches
// applied. The environment is read here, once, when smla_context_create makes a context; the
// layers below take these values and read no variable. A tool that picks what its contexts run
// (`smla tune` times tiles and modes) fills the values itself.
//   SMLA_CACHE, SMLA_SYSTEM_CACHE   the cache files (over options.cache_path, system_cache_path)
//   SMLA_JIT=0|1                    forbid or allow compiling at call time (over options.jit)
//   SMLA_LOG=error|warn|info|debug  (over options.log_level)
//   SMLA_BATCH_VARIANT=0|1          the batch mode (over options.batch_variant)
//   SMLA_TUNING=0                   ignore the cache's tuning rows (the heuristic plan)
//   SMLA_TILE=<tile text>           run every call on one tile (measuring candidates)
#pragma once

#include <smla.h>

#include <string>

#include "cache/cubin_store.h"
#include "plan/decode_plan.h"
#include "support/log.h"
#include "support/status.h"

namespace smla {

struct ContextSettings {
  int device = 0;
  CubinStore::Options store;
  bool jit_allowed = true;
  smla_log_level log_level = SMLA_LOG_WARN;
  std::string arch;  // to compile for without a device ("": none)
  PlanSettings plan;
  bool use_tuning = true;  // apply the cache's tuning rows for the device
};

// `options` (NULL: the defaults) and the environment. A switch with a value outside its set is
// ignored with a warning on `log` (whose level this sets first); a SMLA_TILE that is no tile
// configuration is INVALID_ARGUMENT.
Status context_settings(const smla_options* options, Logger* log, ContextSettings* settings);

}  // namespace smla
