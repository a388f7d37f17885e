#include "tools/arch_options.h"

#include <algorithm>
#include <memory>

#include "runtime/context.h"

namespace smla::tools {
namespace {

// The local GPU's architecture, found through a context that keeps nothing (memory-only cache,
// errors only); nullptr without a GPU.
Status local_arch(const ArchSpec** arch) {
  smla_options options;
  smla_options_init(&options);
  options.cache_path = "";
  options.log_level = SMLA_LOG_ERROR;
  std::unique_ptr<Context> context;
  const Status status = Context::create(&options, &context);
  if (!status) return error(status.code(), "{}; name the targets with --arch", status.message());
  *arch = context->has_device() ? context->arch() : nullptr;
  return ok_status();
}

}  // namespace

Status resolve_archs(const std::vector<std::string>& given,
                     const std::vector<std::string>& without_gpu,
                     std::vector<const ArchSpec*>* archs) {
  if (given.empty()) {
    const ArchSpec* local = nullptr;
    SMLA_TRY(local_arch(&local));
    if (local != nullptr) {
      *archs = {local};
      return ok_status();
    }
  }
  for (const std::string& name : given.empty() ? without_gpu : given) {
    const ArchSpec* arch = find_arch(name);
    if (arch == nullptr) {
      return error(SMLA_ERR_INVALID_ARGUMENT, "--arch {}: expected one of {}", name, arch_names());
    }
    if (std::find(archs->begin(), archs->end(), arch) == archs->end()) archs->push_back(arch);
  }
  return ok_status();
}

std::vector<std::string> arch_list(const std::vector<const ArchSpec*>& archs) {
  std::vector<std::string> names;
  for (const ArchSpec* arch : archs) names.push_back(arch->name);
  return names;
}

}  // namespace smla::tools
