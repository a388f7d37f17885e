// Editing a cache file behind the store's back, the way a person with the sqlite3 shell (or bit
// rot) would: run SQL, read one value, flip a byte of a stored cubin.
#pragma once

#include <cstdint>
#include <string>

namespace smla::test {

// Runs SQL on `path` through a separate connection; fails the test on error.
void sql_exec(const std::string& path, const std::string& sql);
// The integer of a single-value query on `path` (-1 and a test failure on error).
int64_t sql_int(const std::string& path, const std::string& sql);
// The text of a single-value query on `path` ("" and a test failure on error).
std::string sql_text(const std::string& path, const std::string& sql);
// Flips one byte of kernel `id`'s stored cubin in place, leaving its recorded xxh64 as it was.
void flip_cubin_byte(const std::string& path, uint64_t id, int offset);

}  // namespace smla::test
