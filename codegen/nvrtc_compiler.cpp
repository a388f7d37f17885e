#include "codegen/nvrtc_compiler.h"

#include <nvrtc.h>

#include <chrono>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "codegen/embedded_templates.h"

namespace smla {
namespace {

// Bump when code generation changes in a way the template hash does not see.
constexpr int kCodegenVersion = 1;

Status nvrtc_error(nvrtcResult result, const char* what, const std::string& name) {
  return error(SMLA_ERR_COMPILE, "NVRTC {} failed for {}: {}", what, name,
               nvrtcGetErrorString(result));
}

}  // namespace

std::vector<std::string> compile_options(const std::string& arch) {
  // NOTE: ptxas -v puts the register and spill report into the log; it does not change code.
  return {"--gpu-architecture=" + arch, "--std=c++17", "--ptxas-options=-v",
          "--ptxas-options=--warn-on-spills"};
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

const std::string& toolchain_fingerprint() {
  static const std::string kFingerprint = [] {
    XXH64_state_t* state = XXH64_createState();
    XXH64_reset(state, 0);
    for (const EmbeddedTemplate& t : embedded_templates()) {
      XXH64_update(state, t.name, std::char_traits<char>::length(t.name) + 1);
      XXH64_update(state, t.text, std::char_traits<char>::length(t.text));
    }
    const uint64_t templates = XXH64_digest(state);
    XXH64_freeState(state);
    std::string options;
    for (const std::string& o : compile_options("ARCH")) options += o + " ";
    const uint64_t options_hash = XXH64(options.data(), options.size(), 0);
    return fmt::format("nvrtc={};templates={:016x};codegen={};options={:016x}", nvrtc_version(),
                       templates, kCodegenVersion, options_hash);
  }();
  return kFingerprint;
}

Status compile_to_cubin(const std::string& source, const std::string& name, const std::string& arch,
                        CompiledKernel* result) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<const char*> header_texts, header_names;
  for (const EmbeddedTemplate& t : embedded_templates()) {
    header_texts.push_back(t.text);
    header_names.push_back(t.name);
  }
  nvrtcProgram program = nullptr;
  nvrtcResult rc = nvrtcCreateProgram(&program, source.c_str(), (name + ".cu").c_str(),
                                      static_cast<int>(header_texts.size()), header_texts.data(),
                                      header_names.data());
  if (rc != NVRTC_SUCCESS) return nvrtc_error(rc, "create", name);

  const std::vector<std::string> options = compile_options(arch);
  std::vector<const char*> option_pointers;
  option_pointers.reserve(options.size());
  for (const std::string& o : options) option_pointers.push_back(o.c_str());
  const nvrtcResult compiled = nvrtcCompileProgram(
      program, static_cast<int>(option_pointers.size()), option_pointers.data());

  size_t log_size = 0;
  nvrtcGetProgramLogSize(program, &log_size);
  result->log.assign(log_size, '\0');
  if (log_size > 0) nvrtcGetProgramLog(program, result->log.data());
  while (!result->log.empty() && (result->log.back() == '\0' || result->log.back() == '\n')) {
    result->log.pop_back();
  }

  Status status;
  if (compiled != NVRTC_SUCCESS) {
    status = error(SMLA_ERR_COMPILE, "NVRTC could not compile {} for {}: {}\n{}", name, arch,
                   nvrtcGetErrorString(compiled), result->log);
  } else {
    size_t cubin_size = 0;
    rc = nvrtcGetCUBINSize(program, &cubin_size);
    if (rc == NVRTC_SUCCESS) {
      result->cubin.resize(cubin_size);
      rc = nvrtcGetCUBIN(program, reinterpret_cast<char*>(result->cubin.data()));
    }
    if (rc != NVRTC_SUCCESS) status = nvrtc_error(rc, "cubin", name);
  }
  nvrtcDestroyProgram(&program);
  result->compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return status;
}

}  // namespace smla
