// The fake CUDA driver of fake_cuda.h: cuGetProcAddress_v2 (what runtime/cuda_driver.cpp looks
// up) hands out the functions below, each of the signature cuda.h declares for its base name.
#include "fake_cuda.h"

#include <cstring>
#include <deque>
#include <optional>

namespace fake_cuda {
namespace {

State& state() {
  static State the_state;
  return the_state;
}

thread_local std::vector<CUcontext> current_contexts;

// Counts the call; the injected failure if it is due.
std::optional<CUresult> enter(const char* name) {
  State& s = state();
  const int before = s.calls[name]++;
  if (s.fail_call == name && before >= s.fail_after) return s.fail_result;
  return std::nullopt;
}

// Calls that need a current context note when there is none.
void need_context() {
  if (current_contexts.empty()) ++state().calls_without_context;
}

#define FAKE_ENTER(name)                                        \
  std::lock_guard<std::mutex> lock(state().mutex);              \
  if (const std::optional<CUresult> failed = enter(name)) return *failed

struct Module {
  std::deque<std::string> functions;  // the CUfunction handles point to these names
};

CUresult fake_cuInit(unsigned int) {
  FAKE_ENTER("cuInit");
  return CUDA_SUCCESS;
}

CUresult fake_cuDriverGetVersion(int* version) {
  FAKE_ENTER("cuDriverGetVersion");
  *version = CUDA_VERSION;
  return CUDA_SUCCESS;
}

CUresult fake_cuDeviceGetCount(int* count) {
  FAKE_ENTER("cuDeviceGetCount");
  *count = state().device_count;
  return CUDA_SUCCESS;
}

CUresult fake_cuDeviceGet(CUdevice* device, int ordinal) {
  FAKE_ENTER("cuDeviceGet");
  if (ordinal < 0 || ordinal >= state().device_count) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult fake_cuDeviceGetName(char* name, int length, CUdevice) {
  FAKE_ENTER("cuDeviceGetName");
  std::strncpy(name, "Fake GPU", static_cast<size_t>(length));
  return CUDA_SUCCESS;
}

CUresult fake_cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice) {
  FAKE_ENTER("cuDeviceGetAttribute");
  const State& s = state();
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *value = s.major;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *value = s.minor;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *value = s.sm_count;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_NOT_SUPPORTED;
  }
}

CUresult fake_cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice) {
  FAKE_ENTER("cuDevicePrimaryCtxRetain");
  ++state().primary_retained;
  *context = primary_context();
  return CUDA_SUCCESS;
}

CUresult fake_cuDevicePrimaryCtxRelease(CUdevice) {
  FAKE_ENTER("cuDevicePrimaryCtxRelease");
  if (state().primary_retained == 0) return CUDA_ERROR_INVALID_CONTEXT;
  --state().primary_retained;
  return CUDA_SUCCESS;
}

CUresult fake_cuCtxGetCurrent(CUcontext* context) {
  FAKE_ENTER("cuCtxGetCurrent");
  *context = current_contexts.empty() ? nullptr : current_contexts.back();
  return CUDA_SUCCESS;
}

CUresult fake_cuCtxPushCurrent(CUcontext context) {
  FAKE_ENTER("cuCtxPushCurrent");
  if (context == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  current_contexts.push_back(context);
  return CUDA_SUCCESS;
}

CUresult fake_cuCtxPopCurrent(CUcontext* context) {
  FAKE_ENTER("cuCtxPopCurrent");
  if (current_contexts.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  if (context != nullptr) *context = current_contexts.back();
  current_contexts.pop_back();
  return CUDA_SUCCESS;
}

CUresult fake_cuModuleLoadData(CUmodule* module, const void* image) {
  FAKE_ENTER("cuModuleLoadData");
  need_context();
  // A cubin is an ELF image.
  if (image == nullptr || std::memcmp(image, "\x7f" "ELF", 4) != 0) return CUDA_ERROR_INVALID_IMAGE;
  ++state().modules_loaded;
  *module = reinterpret_cast<CUmodule>(new Module());
  return CUDA_SUCCESS;
}

CUresult fake_cuModuleUnload(CUmodule module) {
  FAKE_ENTER("cuModuleUnload");
  if (module == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  --state().modules_loaded;
  delete reinterpret_cast<Module*>(module);
  return CUDA_SUCCESS;
}

CUresult fake_cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  FAKE_ENTER("cuModuleGetFunction");
  need_context();
  if (module == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::deque<std::string>& functions = reinterpret_cast<Module*>(module)->functions;
  functions.emplace_back(name);
  *function = reinterpret_cast<CUfunction>(&functions.back());
  return CUDA_SUCCESS;
}

CUresult fake_cuFuncSetAttribute(CUfunction function, CUfunction_attribute, int) {
  FAKE_ENTER("cuFuncSetAttribute");
  return function == nullptr ? CUDA_ERROR_INVALID_HANDLE : CUDA_SUCCESS;
}

CUresult fake_cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction function, void** params,
                               void**) {
  FAKE_ENTER("cuLaunchKernelEx");
  need_context();
  if (config == nullptr || function == nullptr || params == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (config->gridDimY != 1 || config->gridDimZ != 1 || config->blockDimY != 1 ||
      config->blockDimZ != 1 || config->gridDimX == 0 || config->blockDimX == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  Launch launch;
  launch.function = *reinterpret_cast<const std::string*>(function);
  launch.grid = config->gridDimX;
  launch.block = config->blockDimX;
  launch.shared_bytes = config->sharedMemBytes;
  launch.stream = config->hStream;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttribute& attribute = config->attrs[i];
    if (attribute.id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION) {
      launch.programmatic = attribute.value.programmaticStreamSerializationAllowed == 1;
    }
  }
  state().launches.push_back(launch);
  return CUDA_SUCCESS;
}

CUresult fake_cuStreamIsCapturing(CUstream, CUstreamCaptureStatus* status) {
  FAKE_ENTER("cuStreamIsCapturing");
  *status = state().capture;
  return CUDA_SUCCESS;
}

CUresult fake_cuGetErrorName(CUresult result, const char** name) {
  switch (result) {
    case CUDA_ERROR_INVALID_IMAGE:
      *name = "CUDA_ERROR_INVALID_IMAGE";
      return CUDA_SUCCESS;
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
      *name = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
      return CUDA_SUCCESS;
    case CUDA_ERROR_OUT_OF_MEMORY:
      *name = "CUDA_ERROR_OUT_OF_MEMORY";
      return CUDA_SUCCESS;
    default:
      *name = "CUDA_ERROR_UNKNOWN";
      return CUDA_SUCCESS;
  }
}

CUresult fake_cuGetErrorString(CUresult, const char** text) {
  *text = "injected by the fake driver";
  return CUDA_SUCCESS;
}

// What the fake-driver tests do not reach: present (the runtime loads every function it
// declares), and unsupported.
template <typename... Args>
CUresult fake_unsupported(Args...) {
  return CUDA_ERROR_NOT_SUPPORTED;
}

struct Entry {
  const char* name;
  void* function;
};

// The cast checks each fake against cuda.h's declaration of the name.
#define FAKE(name) Entry{#name, reinterpret_cast<void*>(static_cast<decltype(&::name)>(&fake_##name))}
#define UNSUPPORTED(name) \
  Entry{#name, reinterpret_cast<void*>(static_cast<decltype(&::name)>(&fake_unsupported))}

const Entry kEntries[] = {
    FAKE(cuInit), FAKE(cuDriverGetVersion), FAKE(cuDeviceGetCount), FAKE(cuDeviceGet),
    FAKE(cuDeviceGetName), FAKE(cuDeviceGetAttribute), FAKE(cuDevicePrimaryCtxRetain),
    FAKE(cuDevicePrimaryCtxRelease), FAKE(cuCtxGetCurrent), FAKE(cuCtxPushCurrent),
    FAKE(cuCtxPopCurrent), FAKE(cuModuleLoadData), FAKE(cuModuleUnload), FAKE(cuModuleGetFunction),
    FAKE(cuFuncSetAttribute), FAKE(cuLaunchKernelEx), FAKE(cuStreamIsCapturing),
    FAKE(cuGetErrorName), FAKE(cuGetErrorString), UNSUPPORTED(cuStreamCreate),
    UNSUPPORTED(cuStreamDestroy), UNSUPPORTED(cuStreamSynchronize),
    UNSUPPORTED(cuStreamBeginCapture), UNSUPPORTED(cuStreamEndCapture),
    UNSUPPORTED(cuGraphInstantiateWithFlags), UNSUPPORTED(cuGraphLaunch),
    UNSUPPORTED(cuGraphExecDestroy), UNSUPPORTED(cuGraphDestroy), UNSUPPORTED(cuMemAlloc),
    UNSUPPORTED(cuMemFree), UNSUPPORTED(cuMemcpyHtoD), UNSUPPORTED(cuMemcpyDtoH),
    UNSUPPORTED(cuMemsetD8), UNSUPPORTED(cuEventCreate), UNSUPPORTED(cuEventRecord),
    UNSUPPORTED(cuEventSynchronize), UNSUPPORTED(cuEventElapsedTime), UNSUPPORTED(cuEventDestroy),
};

}  // namespace
}  // namespace fake_cuda

extern "C" {

__attribute__((visibility("default"))) fake_cuda::State* fake_cuda_reset() {
  fake_cuda::State& s = fake_cuda::state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.device_count = 1;
  s.major = 9;
  s.minor = 0;
  s.sm_count = 132;
  s.capture = CU_STREAM_CAPTURE_STATUS_NONE;
  s.fail_call.clear();
  s.fail_after = 0;
  s.fail_result = CUDA_ERROR_UNKNOWN;
  s.calls.clear();
  s.primary_retained = 0;
  s.modules_loaded = 0;
  s.calls_without_context = 0;
  s.launches.clear();
  fake_cuda::current_contexts.clear();
  return &s;
}

// cuda.h spells it cuGetProcAddress and maps the name to cuGetProcAddress_v2, the symbol
// runtime/cuda_driver.cpp asks dlsym for.
__attribute__((visibility("default"))) CUresult cuGetProcAddress(
    const char* symbol, void** function, int, cuuint64_t, CUdriverProcAddressQueryResult* found) {
  for (const fake_cuda::Entry& entry : fake_cuda::kEntries) {
    if (std::strcmp(entry.name, symbol) == 0) {
      *function = entry.function;
      if (found != nullptr) *found = CU_GET_PROC_ADDRESS_SUCCESS;
      return CUDA_SUCCESS;
    }
  }
  *function = nullptr;
  if (found != nullptr) *found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_ERROR_NOT_FOUND;
}

}  // extern "C"
