#include "cache/kernel_table.h"

#define XXH_INLINE_ALL
#include <fmt/format.h>
#include <xxhash.h>

#include <utility>

namespace smla {

uint64_t cubin_xxh64(const std::vector<uint8_t>& cubin) {
  return XXH64(cubin.data(), cubin.size(), 0);
}

namespace {

constexpr const char* kEntryColumns =
    "id, key_text, arch, fingerprint, compile_ms, cubin_bytes, created, last_used, hits";

// The columns of kEntryColumns from `first` on.
KernelEntry entry_of(const SqliteStatement& row, int first, const std::string& origin) {
  KernelEntry entry;
  entry.id = from_sql(row.column_int64(first));
  entry.key_text = row.column_text(first + 1);
  entry.arch = row.column_text(first + 2);
  entry.fingerprint = row.column_text(first + 3);
  entry.compile_ms = row.column_double(first + 4);
  entry.cubin_bytes = row.column_int64(first + 5);
  entry.created = row.column_int64(first + 6);
  entry.last_used = row.column_int64(first + 7);
  entry.hits = row.column_int64(first + 8);
  entry.origin = origin;
  return entry;
}

}  // namespace

Status KernelTable::read(uint64_t id, CubinRead* read) {
  SqliteStatement select;
  SMLA_TRY(db_.prepare(
      fmt::format("SELECT cubin, cubin_xxh64, {} FROM kernels WHERE id = ?", kEntryColumns).c_str(),
      &select));
  select.bind(1, to_sql(id));
  bool has_row = false;
  SMLA_TRY(select.step(&has_row));
  *read = CubinRead();
  if (!has_row) return ok_status();
  read->cubin = select.column_blob(0);
  read->entry = entry_of(select, 2, "");
  if (cubin_xxh64(read->cubin) == from_sql(select.column_int64(1))) {
    read->result = CubinRead::Result::kGood;
  } else {
    read->result = CubinRead::Result::kCorrupt;
    read->cubin.clear();
  }
  return ok_status();
}

Status KernelTable::contains(uint64_t id, bool* present) {
  SqliteStatement select;
  SMLA_TRY(db_.prepare("SELECT 1 FROM kernels WHERE id = ?", &select));
  select.bind(1, to_sql(id));
  return select.step(present);
}

Status KernelTable::store(const KernelEntry& entry, const std::vector<uint8_t>& cubin,
                          double compile_ms, int64_t now) {
  SqliteStatement upsert;
  SMLA_TRY(db_.prepare(
      "INSERT INTO kernels (id, key_text, arch, fingerprint, cubin, cubin_xxh64, compile_ms, "
      "cubin_bytes, created, last_used, hits) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9, 0) "
      "ON CONFLICT (id) DO UPDATE SET key_text = ?2, arch = ?3, fingerprint = ?4, cubin = ?5, "
      "cubin_xxh64 = ?6, compile_ms = ?7, cubin_bytes = ?8, last_used = ?9",
      &upsert));
  upsert.bind(1, to_sql(entry.id))
      .bind(2, entry.key_text)
      .bind(3, entry.arch)
      .bind(4, entry.fingerprint)
      .bind_blob(5, cubin)
      .bind(6, to_sql(cubin_xxh64(cubin)))
      .bind(7, compile_ms)
      .bind(8, static_cast<int64_t>(cubin.size()))
      .bind(9, now);
  return upsert.run();
}

Status KernelTable::restore(const CubinRead& read) {
  const KernelEntry& e = read.entry;
  SqliteStatement insert;
  SMLA_TRY(db_.prepare(
      "INSERT INTO kernels (id, key_text, arch, fingerprint, cubin, cubin_xxh64, compile_ms, "
      "cubin_bytes, created, last_used, hits) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      &insert));
  return insert.bind(1, to_sql(e.id))
      .bind(2, e.key_text)
      .bind(3, e.arch)
      .bind(4, e.fingerprint)
      .bind_blob(5, read.cubin)
      .bind(6, to_sql(cubin_xxh64(read.cubin)))
      .bind(7, e.compile_ms)
      .bind(8, static_cast<int64_t>(read.cubin.size()))
      .bind(9, e.created)
      .bind(10, e.last_used)
      .bind(11, e.hits)
      .run();
}

Status KernelTable::delete_if_corrupt(uint64_t id) {
  CubinRead again;
  SMLA_TRY(read(id, &again));
  if (again.result != CubinRead::Result::kCorrupt) return ok_status();
  SqliteStatement remove;
  SMLA_TRY(db_.prepare("DELETE FROM kernels WHERE id = ?", &remove));
  return remove.bind(1, to_sql(id)).run();
}

Status KernelTable::touch(uint64_t id, int64_t now) {
  SqliteStatement update;
  SMLA_TRY(db_.prepare("UPDATE kernels SET last_used = ?, hits = hits + 1 WHERE id = ?", &update));
  return update.bind(1, now).bind(2, to_sql(id)).run();
}

Status KernelTable::list(const std::string& origin, std::vector<KernelEntry>* entries) {
  SqliteStatement select;
  SMLA_TRY(db_.prepare(
      fmt::format("SELECT {} FROM kernels ORDER BY key_text", kEntryColumns).c_str(), &select));
  for (;;) {
    bool has_row = false;
    SMLA_TRY(select.step(&has_row));
    if (!has_row) return ok_status();
    entries->push_back(entry_of(select, 0, origin));
  }
}

Status KernelTable::ids(bool descending, std::vector<uint64_t>* ids) {
  SqliteStatement select;
  SMLA_TRY(db_.prepare(
      descending ? "SELECT id FROM kernels ORDER BY id DESC" : "SELECT id FROM kernels ORDER BY id",
      &select));
  for (;;) {
    bool has_row = false;
    SMLA_TRY(select.step(&has_row));
    if (!has_row) return ok_status();
    ids->push_back(from_sql(select.column_int64(0)));
  }
}

Status KernelTable::totals(int64_t* count, int64_t* cubin_bytes, int64_t* hits) {
  SqliteStatement select;
  SMLA_TRY(db_.prepare(
      "SELECT count(*), coalesce(sum(cubin_bytes), 0), coalesce(sum(hits), 0) FROM kernels",
      &select));
  bool has_row = false;
  SMLA_TRY(select.step(&has_row));
  *count = select.column_int64(0);
  *cubin_bytes = select.column_int64(1);
  *hits = select.column_int64(2);
  return ok_status();
}

Status KernelTable::verify(const std::string& label_prefix, VerifyReport* report) {
  SqliteStatement select;
  SMLA_TRY(db_.prepare("SELECT key_text, cubin, cubin_xxh64 FROM kernels ORDER BY id", &select));
  for (;;) {
    bool has_row = false;
    SMLA_TRY(select.step(&has_row));
    if (!has_row) return ok_status();
    ++report->checked;
    if (cubin_xxh64(select.column_blob(1)) != from_sql(select.column_int64(2))) {
      report->bad.push_back(label_prefix + select.column_text(0));
    }
  }
}

Status KernelTable::remove_other_fingerprints(const std::string& fingerprint, int64_t* removed) {
  SqliteStatement remove;
  SMLA_TRY(db_.prepare("DELETE FROM kernels WHERE fingerprint != ?", &remove));
  SMLA_TRY(remove.bind(1, fingerprint).run());
  *removed = db_.changes();
  return ok_status();
}

Status KernelTable::evict_least_recently_used(int64_t max_bytes, int64_t* removed) {
  // Running totals from the most recently used down: everything past the point where the total
  // exceeds max_bytes goes, which is exactly "evict the oldest until the rest fits". Among
  // entries last used in the same second, the one with fewer hits goes first.
  SqliteStatement remove;
  SMLA_TRY(db_.prepare(
      "DELETE FROM kernels WHERE id IN (SELECT id FROM (SELECT id, sum(cubin_bytes) OVER "
      "(ORDER BY last_used DESC, hits DESC, id DESC ROWS UNBOUNDED PRECEDING) AS kept "
      "FROM kernels) WHERE kept > ?)",
      &remove));
  SMLA_TRY(remove.bind(1, max_bytes).run());
  *removed = db_.changes();
  return ok_status();
}

}  // namespace smla
