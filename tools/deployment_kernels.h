// The kernels a deployment can dispatch to on a set of architectures: what `smla cache build`
// compiles ahead of time so that serving never does.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_key.h"
#include "deployments/deployment.h"
#include "support/status.h"

namespace smla::tools {

// For each problem of the deployment and each arch: the kernels of both modes' plans
// (plan/decode_plan.h: prewarm_kernels). Deduplicated by key text, in first-seen order. A
// problem the C API would reject is an error naming its layer.
Status deployment_kernels(const Deployment& deployment, const std::vector<const ArchSpec*>& archs,
                          std::vector<KernelKey>* keys);

}  // namespace smla::tools
