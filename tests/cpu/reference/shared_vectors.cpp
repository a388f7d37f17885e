#include "shared_vectors.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

namespace smla::ref::testing {
namespace {

std::vector<std::filesystem::path> candidate_dirs() {
  std::vector<std::filesystem::path> dirs;
  if (const char* dir = std::getenv("SMLA_SHARED_DIR")) dirs.emplace_back(dir);
  dirs.emplace_back(std::filesystem::path(SMLA_SOURCE_DIR) / ".." / "shared");
  dirs.emplace_back("/work/shared");
  return dirs;
}

// Quotes the bare tokens Infinity, -Infinity and NaN that appear outside JSON strings.
std::string quote_non_finite(const std::string& text) {
  static const char* const kTokens[] = {"-Infinity", "Infinity", "NaN"};
  static const char* const kQuoted[] = {"\"-inf\"", "\"inf\"", "\"nan\""};
  std::string result;
  result.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      result += c;
      if (c == '\\' && i + 1 < text.size()) {
        result += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    bool replaced = false;
    for (int t = 0; t < 3 && !replaced; ++t) {
      const std::string token = kTokens[t];
      if (text.compare(i, token.size(), token) == 0) {
        result += kQuoted[t];
        i += token.size() - 1;
        replaced = true;
      }
    }
    if (!replaced) result += c;
  }
  return result;
}

}  // namespace

const nlohmann::json& load_vectors(const std::string& name) {
  static std::map<std::string, nlohmann::json> loaded;
  const auto found = loaded.find(name);
  if (found != loaded.end()) return found->second;
  std::string tried;
  for (const std::filesystem::path& dir : candidate_dirs()) {
    const std::filesystem::path path = dir / "vectors" / name;
    tried += " " + path.string();
    std::ifstream file(path);
    if (!file) continue;
    std::stringstream text;
    text << file.rdbuf();
    return loaded[name] = nlohmann::json::parse(quote_non_finite(text.str()));
  }
  ADD_FAILURE() << "test vectors " << name << " not found; looked in:" << tried
                << " (set SMLA_SHARED_DIR to the shared/ folder)";
  return loaded[name] = nlohmann::json::object();
}

double number(const nlohmann::json& value) {
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    if (text == "inf") return std::numeric_limits<double>::infinity();
    if (text == "-inf") return -std::numeric_limits<double>::infinity();
    if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
    ADD_FAILURE() << "not a number: " << text;
    return std::numeric_limits<double>::quiet_NaN();
  }
  return value.get<double>();
}

std::vector<uint8_t> hex_bytes(const std::string& hex) {
  std::vector<uint8_t> bytes(hex.size() / 2);
  for (size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  }
  return bytes;
}

}  // namespace smla::ref::testing
