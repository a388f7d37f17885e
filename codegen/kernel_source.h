// Source generation: a small prologue of constexpr values that specializes a template family,
// then an #include of the family. The text is what NVRTC compiles and what `smla cache ls
// --source` shows next to the cubin.
#pragma once

#include <string>

#include "codegen/kernel_key.h"

namespace smla {

std::string kernel_source(const KernelKey& key);

}  // namespace smla
