#include "tools/cache_file_option.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <system_error>

#include "cache/file_verify.h"

namespace smla::tools {

void CacheFileOption::add_to(CLI::App& command) {
  option_ = command.add_option("--cache", value_,
                               "cache file (default: $SMLA_CACHE, else ~/.cache/smla/cache.sqlite; "
                               "\"\" = memory only)");
}

std::string CacheFileOption::path() const {
  // NOTE: the option's count, not its value, decides: `--cache ""` asks for memory only.
  if (option_ != nullptr && option_->count() > 0) return value_;
  if (const char* path = std::getenv("SMLA_CACHE")) return path;
  return default_cache_path();
}

std::unique_ptr<CubinStore> CacheFileOption::open(const Logger& log, Status* file_status) const {
  CubinStore::Options options;
  options.path = path();
  return CubinStore::open(options, log, file_status);
}

namespace {

void print_not_usable(const char* command, const Status& why) {
  fmt::print(stderr, "smla cache {}: {}\n", command, why.message());
}

// The first line of what SQLite found (quick_check lists every bad page, under a heading line).
std::string first_finding(const std::string& finding) {
  std::istringstream lines(finding);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("database: ", 0) == 0) line.erase(0, 10);  // the report's label
    if (!line.empty() && line.rfind("***", 0) != 0) return line;
  }
  return finding;
}

}  // namespace

std::unique_ptr<CubinStore> CacheFileOption::open_existing(const char* command, Logger& log) const {
  const std::string file = path();
  std::error_code ec;
  if (!file.empty() && !std::filesystem::exists(file, ec)) {
    log.warn("cache {}: no such file (nothing is created; the cache is empty)", file);
    return CubinStore::open(CubinStore::Options(), log);
  }
  Status file_status;
  std::unique_ptr<CubinStore> store = open_checked(log, &file_status);
  if (file_status) return store;
  print_not_usable(command, file_status);
  return nullptr;
}

Status CacheFileOption::damage() const {
  const std::string file = path();
  std::error_code ec;
  if (file.empty() || !std::filesystem::exists(file, ec)) return ok_status();
  VerifyReport report;
  // A file that cannot be checked at all is left to the store, which says why it cannot use it.
  const Status checked =
      verify_cache_file(file, CubinStore::Options().busy_timeout_ms, &report, VerifyScope::kPages);
  if (!checked || report.clean()) return ok_status();
  return damaged_file_error(file, Status(SMLA_ERR_CACHE, first_finding(report.bad.front())));
}

std::unique_ptr<CubinStore> CacheFileOption::open_checked(Logger& log, Status* file_status) const {
  *file_status = damage();
  if (!*file_status) return nullptr;
  CubinStore::Options options;
  options.path = path();
  const smla_log_level level = log.level();
  log.set_level(SMLA_LOG_ERROR);
  std::unique_ptr<CubinStore> store = CubinStore::open(options, log, file_status);
  log.set_level(level);
  return store;
}

bool CacheFileOption::read_only() const {
  const std::string file = path();
  std::error_code ec;
  return !file.empty() && std::filesystem::exists(file, ec) && !may_write_cache_file(file);
}

std::string CacheFileOption::existing_file(const char* command) const {
  std::string file = path();
  std::error_code ec;
  if (!file.empty() && std::filesystem::exists(file, ec)) return file;
  fmt::print(stderr, "smla cache {}: no cache file {}(the cache is memory only)\n", command,
             file.empty() ? "" : "at " + file + " ");
  return "";
}

std::unique_ptr<CubinStore> CacheFileOption::open_usable(const char* command, Logger& log) const {
  const std::string file = existing_file(command);
  if (file.empty()) return nullptr;
  Status file_status;
  std::unique_ptr<CubinStore> store = open_checked(log, &file_status);
  if (file_status && store->persistent()) return store;
  print_not_usable(
      command, file_status ? error(SMLA_ERR_CACHE, "{}: this user may not write it, which {} needs",
                                   file, command)
                           : file_status);
  return nullptr;
}

}  // namespace smla::tools
