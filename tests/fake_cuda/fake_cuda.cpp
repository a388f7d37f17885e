// The fake CUDA driver of fake_cuda.h: cuGetProcAddress_v2 (what runtime/cuda_driver.cpp looks
// up) hands out the functions below, each of the signature cuda.h declares for its base name.
#include "fake_cuda.h"

#include <cstring>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>

namespace fake_cuda {
namespace {

constexpr int kDefaultSharedBytes = 48 * 1024;
constexpr int kMaxSharedBytes = 232448;  // sm_90's opt-in maximum per block

struct Module {
  CUcontext context;
  int load;  // 1 for the process's first load, ...
};

struct Function {
  Module* module;
  std::string name;
  int max_dynamic_shared = kDefaultSharedBytes;
};

struct Driver {
  State state;
  std::map<Module*, std::unique_ptr<Module>> modules;  // the loaded ones
  std::map<Function*, std::unique_ptr<Function>> functions;
  int loads = 0;
};

Driver& driver() {
  static Driver the_driver;
  return the_driver;
}

State& state() { return driver().state; }

thread_local std::vector<CUcontext> current_contexts;

// Counts the call; the injected failure if it is due.
std::optional<CUresult> enter(const char* name) {
  State& s = state();
  const int before = s.calls[name]++;
  if (s.fail_call == name && before >= s.fail_after) return s.fail_result;
  return std::nullopt;
}

bool usable(CUcontext context) {
  return context == other_context() ||
         (context == primary_context() && state().primary_retained > 0);
}

// The current context if one is and it may be used, else null.
CUcontext current() {
  return !current_contexts.empty() && usable(current_contexts.back()) ? current_contexts.back()
                                                                      : nullptr;
}

// The function of a loaded module (unloading a module drops its functions), or null.
Function* live_function(CUfunction handle) {
  const auto found = driver().functions.find(reinterpret_cast<Function*>(handle));
  return found == driver().functions.end() ? nullptr : found->second.get();
}

std::mutex& call_mutex() {
  static std::mutex mutex;
  return mutex;
}

#define FAKE_ENTER(name)                          \
  std::lock_guard<std::mutex> lock(call_mutex()); \
  if (const std::optional<CUresult> failed = enter(name)) return *failed

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
  std::strncpy(name, kDeviceName, static_cast<size_t>(length));
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
  if (!usable(context)) return CUDA_ERROR_INVALID_CONTEXT;
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
  if (current() == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  constexpr char kElfMagic[] = {0x7f, 'E', 'L', 'F'};  // a cubin is an ELF image
  if (image == nullptr || std::memcmp(image, kElfMagic, sizeof kElfMagic) != 0) {
    return CUDA_ERROR_INVALID_IMAGE;
  }
  auto loaded = std::make_unique<Module>(Module{current(), ++driver().loads});
  *module = reinterpret_cast<CUmodule>(loaded.get());
  driver().modules.emplace(loaded.get(), std::move(loaded));
  ++state().modules_loaded;
  return CUDA_SUCCESS;
}

CUresult fake_cuModuleUnload(CUmodule handle) {
  FAKE_ENTER("cuModuleUnload");
  const auto found = driver().modules.find(reinterpret_cast<Module*>(handle));
  if (found == driver().modules.end()) return CUDA_ERROR_INVALID_HANDLE;
  if (current() != found->first->context) return CUDA_ERROR_INVALID_CONTEXT;
  for (auto f = driver().functions.begin(); f != driver().functions.end();) {
    f = f->second->module == found->first ? driver().functions.erase(f) : std::next(f);
  }
  driver().modules.erase(found);
  --state().modules_loaded;
  return CUDA_SUCCESS;
}

CUresult fake_cuModuleGetFunction(CUfunction* function, CUmodule handle, const char* name) {
  FAKE_ENTER("cuModuleGetFunction");
  const auto found = driver().modules.find(reinterpret_cast<Module*>(handle));
  if (found == driver().modules.end()) return CUDA_ERROR_INVALID_HANDLE;
  if (current() != found->first->context) return CUDA_ERROR_INVALID_CONTEXT;
  auto made = std::make_unique<Function>(Function{found->first, name});
  *function = reinterpret_cast<CUfunction>(made.get());
  driver().functions.emplace(made.get(), std::move(made));
  return CUDA_SUCCESS;
}

CUresult fake_cuFuncGetAttribute(int* value, CUfunction_attribute attribute, CUfunction handle) {
  FAKE_ENTER("cuFuncGetAttribute");
  if (live_function(handle) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (attribute != CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES) return CUDA_ERROR_NOT_SUPPORTED;
  *value = state().local_bytes;
  return CUDA_SUCCESS;
}

CUresult fake_cuCtxGetLimit(size_t* value, CUlimit limit) {
  FAKE_ENTER("cuCtxGetLimit");
  if (current() == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  if (limit != CU_LIMIT_STACK_SIZE) return CUDA_ERROR_NOT_SUPPORTED;
  *value = state().stack_limit;
  return CUDA_SUCCESS;
}

CUresult fake_cuCtxSetLimit(CUlimit limit, size_t value) {
  FAKE_ENTER("cuCtxSetLimit");
  if (current() == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  if (limit != CU_LIMIT_STACK_SIZE) return CUDA_ERROR_NOT_SUPPORTED;
  state().stack_limit = value;
  return CUDA_SUCCESS;
}

CUresult fake_cuFuncSetAttribute(CUfunction handle, CUfunction_attribute attribute, int value) {
  FAKE_ENTER("cuFuncSetAttribute");
  Function* function = live_function(handle);
  if (function == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return CUDA_ERROR_NOT_SUPPORTED;
  if (value < 0 || value > kMaxSharedBytes) return CUDA_ERROR_INVALID_VALUE;
  function->max_dynamic_shared = value;
  return CUDA_SUCCESS;
}

CUresult fake_cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction handle, void** params,
                               void**) {
  FAKE_ENTER("cuLaunchKernelEx");
  Function* function = live_function(handle);
  if (function == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (current() != function->module->context) return CUDA_ERROR_INVALID_CONTEXT;
  if (config == nullptr || params == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (config->gridDimY == 0 || config->gridDimY > 65535 || config->gridDimZ != 1 ||
      config->blockDimY != 1 || config->blockDimZ != 1 || config->gridDimX == 0 ||
      config->blockDimX == 0 || config->blockDimX > 1024 ||
      config->sharedMemBytes > static_cast<unsigned>(function->max_dynamic_shared)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  Launch launch;
  launch.function = function->name;
  launch.module = function->module->load;
  launch.grid = config->gridDimX;
  launch.grid_y = config->gridDimY;
  launch.block = config->blockDimX;
  launch.shared_bytes = config->sharedMemBytes;
  launch.stream = config->hStream;
  launch.grows_stack = static_cast<size_t>(state().local_bytes) > state().stack_limit;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttribute& attribute = config->attrs[i];
    if (attribute.id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION) {
      launch.programmatic = attribute.value.programmaticStreamSerializationAllowed == 1;
    }
  }
  const auto* first = static_cast<const unsigned char*>(params[0]);
  launch.params.assign(first, first + state().param_bytes);
  state().launches.push_back(launch);
  return CUDA_SUCCESS;
}

CUresult fake_cuStreamIsCapturing(CUstream, CUstreamCaptureStatus* status) {
  FAKE_ENTER("cuStreamIsCapturing");
  *status = state().capture;
  return CUDA_SUCCESS;
}

// The codes the fake returns; others are unknown to it, as unknown codes are to the driver.
CUresult fake_cuGetErrorName(CUresult result, const char** name) {
  switch (result) {
#define FAKE_ERROR_NAME(code) \
  case code:                  \
    *name = #code;            \
    return CUDA_SUCCESS;
    FAKE_ERROR_NAME(CUDA_ERROR_INVALID_VALUE)
    FAKE_ERROR_NAME(CUDA_ERROR_OUT_OF_MEMORY)
    FAKE_ERROR_NAME(CUDA_ERROR_INVALID_DEVICE)
    FAKE_ERROR_NAME(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)
    FAKE_ERROR_NAME(CUDA_ERROR_INVALID_IMAGE)
    FAKE_ERROR_NAME(CUDA_ERROR_INVALID_CONTEXT)
    FAKE_ERROR_NAME(CUDA_ERROR_INVALID_HANDLE)
    FAKE_ERROR_NAME(CUDA_ERROR_NOT_FOUND)
    FAKE_ERROR_NAME(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
    FAKE_ERROR_NAME(CUDA_ERROR_NOT_SUPPORTED)
    FAKE_ERROR_NAME(CUDA_ERROR_UNKNOWN)
#undef FAKE_ERROR_NAME
    default:
      *name = nullptr;
      return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult fake_cuGetErrorString(CUresult result, const char** text) {
  const char* name = nullptr;
  if (fake_cuGetErrorName(result, &name) != CUDA_SUCCESS) {
    *text = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
  *text = "returned by the fake driver";
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
// clang-format off
#define FAKE(name) \
  Entry{#name, reinterpret_cast<void*>(static_cast<decltype(&::name)>(&fake_##name))}
#define UNSUPPORTED(name) \
  Entry{#name, reinterpret_cast<void*>(static_cast<decltype(&::name)>(&fake_unsupported))}
// clang-format on

const Entry kEntries[] = {
    FAKE(cuInit),
    FAKE(cuDriverGetVersion),
    FAKE(cuDeviceGetCount),
    FAKE(cuDeviceGet),
    FAKE(cuDeviceGetName),
    FAKE(cuDeviceGetAttribute),
    FAKE(cuDevicePrimaryCtxRetain),
    FAKE(cuDevicePrimaryCtxRelease),
    FAKE(cuCtxGetCurrent),
    FAKE(cuCtxPushCurrent),
    FAKE(cuCtxPopCurrent),
    FAKE(cuModuleLoadData),
    FAKE(cuModuleUnload),
    FAKE(cuModuleGetFunction),
    FAKE(cuFuncGetAttribute),
    FAKE(cuFuncSetAttribute),
    FAKE(cuCtxGetLimit),
    FAKE(cuCtxSetLimit),
    FAKE(cuLaunchKernelEx),
    FAKE(cuStreamIsCapturing),
    FAKE(cuGetErrorName),
    FAKE(cuGetErrorString),
    UNSUPPORTED(cuStreamCreate),
    UNSUPPORTED(cuStreamDestroy),
    UNSUPPORTED(cuStreamSynchronize),
    UNSUPPORTED(cuStreamBeginCapture),
    UNSUPPORTED(cuStreamEndCapture),
    UNSUPPORTED(cuGraphInstantiateWithFlags),
    UNSUPPORTED(cuGraphLaunch),
    UNSUPPORTED(cuGraphExecDestroy),
    UNSUPPORTED(cuGraphDestroy),
    UNSUPPORTED(cuMemAlloc),
    UNSUPPORTED(cuMemFree),
    UNSUPPORTED(cuMemcpyHtoD),
    UNSUPPORTED(cuMemcpyDtoH),
    UNSUPPORTED(cuMemsetD8),
    UNSUPPORTED(cuEventCreate),
    UNSUPPORTED(cuEventRecord),
    UNSUPPORTED(cuEventSynchronize),
    UNSUPPORTED(cuEventElapsedTime),
    UNSUPPORTED(cuEventDestroy),
};

}  // namespace
}  // namespace fake_cuda

extern "C" {

__attribute__((visibility("default"))) fake_cuda::State* fake_cuda_reset() {
  std::lock_guard<std::mutex> lock(fake_cuda::call_mutex());
  fake_cuda::State& s = fake_cuda::state();
  s.device_count = 1;
  s.major = 9;
  s.minor = 0;
  s.sm_count = fake_cuda::kSmCount;
  s.capture = CU_STREAM_CAPTURE_STATUS_NONE;
  s.param_bytes = 0;
  s.fail_call.clear();
  s.fail_after = 0;
  s.fail_result = CUDA_ERROR_UNKNOWN;
  s.calls.clear();
  s.primary_retained = 0;
  s.modules_loaded = 0;
  s.launches.clear();
  fake_cuda::driver().modules.clear();
  fake_cuda::driver().functions.clear();
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
