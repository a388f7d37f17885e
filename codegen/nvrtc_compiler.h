// Compiles generated source to a cubin with NVRTC for sm_90a, sm_100a or sm_103a. The embedded
// templates are passed as NVRTC headers, so no file system or CUDA header is involved.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/status.h"

namespace smla {

struct CompiledKernel {
  std::vector<uint8_t> cubin;
  std::string log;  // NVRTC's log, including ptxas' resource usage line
  double compile_ms = 0;
};

// SMLA_ERR_COMPILE with the log in the message on failure.
Status compile_to_cubin(const std::string& source, const std::string& name, const std::string& arch,
                        CompiledKernel* result);

// The options compile_to_cubin passes for `arch` (part of the toolchain fingerprint).
std::vector<std::string> compile_options(const std::string& arch);

// "13.0" etc.
std::string nvrtc_version();

// The toolchain fingerprint: NVRTC version, a hash of every embedded template, the codegen
// version and the compile options. Changing any of them makes old cubins unreachable.
const std::string& toolchain_fingerprint();

}  // namespace smla
