// Access to the test vectors in shared/vectors (computed by an independent implementation of
// docs/semantics.md). They are read at test time, never copied into the repository.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace smla::ref::testing {

// shared/vectors/<name> parsed, or a failed test naming every place looked in: $SMLA_SHARED_DIR,
// then SMLA_SOURCE_DIR/../shared, then /work/shared. The files hold the bare JSON extensions
// Infinity, -Infinity and NaN (Python's json writes them); they are read as the strings "inf",
// "-inf" and "nan", which number() understands. Each file is parsed once per process.
const nlohmann::json& load_vectors(const std::string& name);

// A number, or one of the strings "inf", "-inf", "nan".
double number(const nlohmann::json& value);
std::vector<uint8_t> hex_bytes(const std::string& hex);

}  // namespace smla::ref::testing
