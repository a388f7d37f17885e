// Clears every SMLA_* variable a context reads for the life of the object and restores them
// after: the host's environment must not change what a test checks. Test fixtures hold one;
// changes inside a test go through ScopedEnv.
#pragma once

#include "support/scoped_env.h"

namespace smla::test {

class ClearedSmlaEnvironment {
 private:
  ScopedEnv cache_{"SMLA_CACHE", nullptr};
  ScopedEnv system_cache_{"SMLA_SYSTEM_CACHE", nullptr};
  ScopedEnv jit_{"SMLA_JIT", nullptr};
  ScopedEnv batch_invariant_{"SMLA_BATCH_INVARIANT", nullptr};
  ScopedEnv batch_variant_{"SMLA_BATCH_VARIANT", nullptr};
  ScopedEnv tuning_{"SMLA_TUNING", nullptr};
  ScopedEnv log_{"SMLA_LOG", nullptr};
  ScopedEnv tile_{"SMLA_TILE", nullptr};
};

}  // namespace smla::test
