#include "runtime/kernel_builder.h"

#include "codegen/kernel_source.h"
#include "codegen/nvrtc_compiler.h"

namespace smla {

Status KernelBuilder::build(const KernelKey& key, bool allow_compile, BuildResult* result) const {
  const std::string& fingerprint = toolchain_fingerprint();
  KernelEntry entry;
  entry.id = key.id(fingerprint);
  entry.key_text = key.text();
  entry.arch = key.arch().name;
  entry.fingerprint = fingerprint;
  if (!allow_compile) {
    std::optional<std::vector<uint8_t>> cubin = store_.find(entry.id);
    if (!cubin) {
      return error(SMLA_ERR_NOT_READY,
                   "kernel {} is not in the cache and compiling is not allowed now (SMLA_JIT=0 "
                   "or options.jit = 0, or a capturing stream)",
                   entry.key_text);
    }
    result->cubin = std::move(*cubin);
    return ok_status();
  }
  const CompileFn compile = [&](std::vector<uint8_t>* cubin, double* compile_ms) -> Status {
    CompiledKernel compiled;
    SMLA_TRY(
        compile_to_cubin(kernel_source(key), key.entry_points()[0], key.arch().name, &compiled));
    log_.info("compiled {} in {:.0f} ms ({} bytes)", entry.key_text, compiled.compile_ms,
              compiled.cubin.size());
    if (compiled.log.find("Registers are spilled") != std::string::npos) {
      log_.warn("{} spills registers:\n{}", entry.key_text, compiled.log);
    }
    result->compile_ms = compiled.compile_ms;
    *compile_ms = compiled.compile_ms;
    *cubin = std::move(compiled.cubin);
    return ok_status();
  };
  return store_.get_or_compile(entry, compile, &result->cubin, &result->compiled);
}

}  // namespace smla
