// The decode and combine kernels' launch parameters, as the templates declare them: runtime/
// fills them for each launch and reaches the templates only through codegen (docs/design.md).
#pragma once

#include "templates/decode_params.cuh"
