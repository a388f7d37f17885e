// The `kernels` table of one cache file. Every cubin read is checked against the xxh64 stored
// beside it, so a torn or bit-rotted blob is never handed to the driver. Writes here run inside
// the caller's write transaction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/cubin_store.h"
#include "cache/sqlite_db.h"

namespace smla {

uint64_t cubin_xxh64(const std::vector<uint8_t>& cubin);

struct CubinRead {
  enum class Result { kMissing, kGood, kCorrupt };
  Result result = Result::kMissing;
  std::vector<uint8_t> cubin;  // kGood only
  KernelEntry entry;           // kGood and kCorrupt: the row's other columns
};

class KernelTable {
 public:
  explicit KernelTable(SqliteDb& db) : db_(db) {}

  Status read(uint64_t id, CubinRead* read);
  Status contains(uint64_t id, bool* present);
  // Inserts or replaces the cubin of entry.id; hits and created survive a replacement.
  Status store(const KernelEntry& entry, const std::vector<uint8_t>& cubin, double compile_ms,
               int64_t now);
  // Inserts a row as it was read from another file (`read.entry` with its times and hits).
  Status restore(const CubinRead& read);
  // Deletes the entry only if its blob still fails its check: another process may have
  // replaced it with a good one since it was read.
  Status delete_if_corrupt(uint64_t id);
  Status touch(uint64_t id, int64_t now);

  Status list(const std::string& origin, std::vector<KernelEntry>* entries);
  // The ids in rowid order, ascending or descending, appended as far as the scan gets: a scan
  // that fails at a damaged page keeps the ids before it.
  Status ids(bool descending, std::vector<uint64_t>* ids);
  Status totals(int64_t* count, int64_t* cubin_bytes, int64_t* hits);
  // Appends `label_prefix` + key text of every entry whose blob fails its check.
  Status verify(const std::string& label_prefix, VerifyReport* report);

  Status remove_other_fingerprints(const std::string& fingerprint, int64_t* removed);
  // Removes the least recently used entries until the cubins total at most max_bytes.
  Status evict_least_recently_used(int64_t max_bytes, int64_t* removed);

 private:
  SqliteDb& db_;
};

}  // namespace smla
