// `smla cache export`: writes the cached cubins to a directory as `<id>.cubin` with an
// index.txt (`<file> <key text>` per line), for cuobjdump/nvdisasm and for shipping.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "codegen/arch.h"
#include "support/environment.h"
#include "tools/cache_commands.h"
#include "tools/cache_file_option.h"
#include "tools/size_text.h"

namespace smla::tools {
namespace {

struct ExportOptions {
  std::string dir;
  std::vector<std::string> archs;  // empty: every arch
  CacheFileOption cache;
};

Status write_file(const std::string& path, const void* data, size_t bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  file.close();
  if (!file) return error(SMLA_ERR_CACHE, "cannot write {}", path);
  return ok_status();
}

int run_export(const ExportOptions& o) {
  for (const std::string& arch : o.archs) {
    if (find_arch(arch) == nullptr) {
      fmt::print(stderr, "smla cache export: --arch {}: expected one of {}\n", arch, arch_names());
      return kExitUsage;
    }
  }
  Logger log;
  apply_log_environment(&log);
  if (o.cache.existing_file("export").empty()) return kExitUsage;
  const std::unique_ptr<CubinStore> store = o.cache.open_existing("export", log);
  if (store == nullptr) return kExitUsage;
  std::vector<KernelEntry> entries;
  if (const Status listed = store->list(&entries); !listed) {
    fmt::print(stderr, "smla cache export: {}\n", listed.message());
    return kExitUsage;
  }
  std::error_code ec;
  std::filesystem::create_directories(o.dir, ec);
  if (ec) {
    fmt::print(stderr, "smla cache export: cannot create {}: {}\n", o.dir, ec.message());
    return kExitFailed;
  }
  std::string index;
  int exported = 0;
  int failed = 0;
  int64_t bytes = 0;
  for (const KernelEntry& e : entries) {
    if (!o.archs.empty() && std::find(o.archs.begin(), o.archs.end(), e.arch) == o.archs.end()) {
      continue;
    }
    // NOTE: find() checks the blob's xxh64 (and counts a hit): a damaged cubin is never
    // exported; the store deletes it and the next `smla cache build` rebuilds it.
    const std::optional<std::vector<uint8_t>> cubin = store->find(e.id);
    const std::string name = fmt::format("{:016x}.cubin", e.id);
    Status status = cubin ? write_file(o.dir + "/" + name, cubin->data(), cubin->size())
                          : error(SMLA_ERR_CACHE, "{}: no good cubin in the cache", e.key_text);
    if (!status) {
      fmt::print(stderr, "smla cache export: {}\n", status.message());
      ++failed;
      continue;
    }
    index += fmt::format("{} {}\n", name, e.key_text);
    bytes += static_cast<int64_t>(cubin->size());
    ++exported;
  }
  const Status status = write_file(o.dir + "/index.txt", index.data(), index.size());
  if (!status) {
    fmt::print(stderr, "smla cache export: {}\n", status.message());
    return kExitFailed;
  }
  fmt::print("exported {} cubins ({}) to {}{}\n", exported, size_text(bytes), o.dir,
             failed > 0 ? fmt::format("; {} failed", failed) : "");
  return failed == 0 ? 0 : 1;
}

}  // namespace

void add_cache_export_command(CLI::App& cache, int* exit_code) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* c = cache.add_subcommand(
      "export", "write the cached cubins to a directory (<id>.cubin and index.txt)");
  c->add_option("--dir", o->dir, "output directory (created if missing)")->required();
  add_list_option(*c, "--arch", &o->archs, "only these architectures");
  o->cache.add_to(*c);
  c->callback([o, exit_code] { *exit_code = run_export(*o); });
}

}  // namespace smla::tools
