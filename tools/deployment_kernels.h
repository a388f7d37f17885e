// The kernels a deployment can dispatch to on a set of architectures: what `smla cache build`
// compiles ahead of time so that serving never does.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_key.h"
#include "support/status.h"
#include "tools/lib/deployment.h"

namespace smla::tools {

// For each problem of the deployment and each arch: the decode kernel with the heuristic tile
// configuration (what smla_prepare picks), and its combine kernel when the decode splits into
// segments. Deduplicated by key text, in first-seen order. A problem the C API would reject is
// an error naming its layer.
Status deployment_kernels(const Deployment& deployment, const std::vector<std::string>& archs,
                          std::vector<KernelKey>* keys);

}  // namespace smla::tools
