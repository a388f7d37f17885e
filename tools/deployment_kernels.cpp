#include "tools/deployment_kernels.h"

#include <unordered_set>

#include "plan/decode_plan.h"
#include "runtime/validate.h"

namespace smla::tools {

Status deployment_kernels(const Deployment& deployment, const std::vector<const ArchSpec*>& archs,
                          std::vector<KernelKey>* keys) {
  std::unordered_set<std::string> seen;
  const auto add = [&](const KernelKey& key) {
    if (seen.insert(key.text()).second) keys->push_back(key);
  };
  const std::vector<std::pair<std::string, smla_problem>> problems = deployment.problems();
  if (problems.empty()) {
    return error(SMLA_ERR_INVALID_ARGUMENT, "deployment {} has no problems: no layers or no q_lens",
                 deployment.name);
  }
  for (const auto& [label, problem] : problems) {
    const Status valid = validate_problem(&problem);
    if (!valid)
      return error(valid.code(), "deployment {}, {}: {}", deployment.name, label, valid.message());
    for (const ArchSpec* arch : archs) {
      for (const KernelKey& key : prewarm_kernels(*arch, problem)) add(key);
    }
  }
  return ok_status();
}

}  // namespace smla::tools
