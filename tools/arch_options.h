// The --arch lists of the commands that compile or plan without a GPU: names checked against the
// arch table, each once, in the order given; or, when none is given, the local GPU's arch.
#pragma once

#include <string>
#include <vector>

#include "codegen/arch.h"
#include "support/status.h"

namespace smla::tools {

// `given` empty: the local GPU's arch, else `without_gpu`.
Status resolve_archs(const std::vector<std::string>& given,
                     const std::vector<std::string>& without_gpu,
                     std::vector<const ArchSpec*>* archs);

std::vector<std::string> arch_list(const std::vector<const ArchSpec*>& archs);

}  // namespace smla::tools
