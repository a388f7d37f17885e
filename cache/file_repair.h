// Rebuilding a damaged cache file from what is still readable (`smla cache verify --repair`):
// every kernel row whose cubin passes its xxh64 check and every readable tuning row go into a
// new file, which then replaces the damaged one. Leases are not copied (they are transient).
#pragma once

#include <cstdint>
#include <string>

#include "support/status.h"

namespace smla {

struct RepairReport {
  int64_t kernels_kept = 0;
  int64_t kernels_dropped = 0;  // rows found whose cubin or columns could not be read or checked
  int64_t tuning_rows_kept = 0;
  // A scan stopped at a damaged page: rows between the pages read from either end are lost
  // without being counted in kernels_dropped.
  bool rows_unreachable = false;
};

// Replaces the file at `path` (and its -wal and -shm) with a clean cache holding what could be
// read from it. Needs write access to the file and its directory; run it when no process has
// the file open (one that has keeps writing to the replaced file). Fails, changing nothing, if
// the new file cannot be written.
Status repair_cache_file(const std::string& path, int busy_timeout_ms, RepairReport* report);

}  // namespace smla
