// A fake CUDA driver: tests/fake_cuda builds it as libcuda.so.1, and the fake-driver tests
// (tests/cpu/fake_driver) run with it first on LD_LIBRARY_PATH, so the runtime's driver paths
// (contexts, module loads, launches and their failures) run on a machine without a GPU. It
// reports one Hopper device and is at least as strict as the real driver where the runtime
// depends on it: a per-thread stack of current contexts, a primary context usable only while
// retained, module loads, unloads and launches only in the context the module was loaded in,
// handles checked, dynamic shared memory above 48 KiB only after the function's attribute
// raised it, the stack limit read and set only with a context current. It records every launch
// and fails the call a test names. Nothing runs.
#pragma once

#include <cuda.h>

#include <map>
#include <string>
#include <vector>

namespace fake_cuda {

constexpr const char* kDeviceName = "Fake GPU";
constexpr int kSmCount = 132;

struct Launch {
  std::string function;  // the entry point the function was got by
  int module = 0;        // which module load made it: 1 for the process's first, ...
  unsigned grid = 0;     // gridDimX
  unsigned grid_y = 0;   // gridDimY (Z must be 1)
  unsigned block = 0;    // blockDimX (Y and Z must be 1)
  unsigned shared_bytes = 0;
  bool programmatic = false;  // the programmatic stream serialization attribute, set to 1
  bool grows_stack = false;   // the function's local memory exceeded the stack limit (a real
                              // driver allocates then)
  CUstream stream = nullptr;
  std::vector<unsigned char> params;  // the first kernel parameter's State::param_bytes bytes
};

struct State {
  // The device.
  int device_count = 1;
  int major = 9, minor = 0;
  int sm_count = kSmCount;
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  size_t param_bytes = 0;  // how much of a launch's first parameter to copy (0: none)
  int local_bytes = 0;     // every function's local memory a thread (stack frame)
  size_t stack_limit = 1024;  // CU_LIMIT_STACK_SIZE, one for all contexts (CUDA's default)
  // Failure injection: the call named `fail_call` (its base name, e.g. "cuModuleLoadData")
  // returns `fail_result` once `calls` counts `fail_after` calls of it, and every time after.
  std::string fail_call;
  int fail_after = 0;
  CUresult fail_result = CUDA_ERROR_UNKNOWN;
  // What happened.
  std::map<std::string, int> calls;  // calls by base name, failed ones included
  int primary_retained = 0;          // retains minus releases
  int modules_loaded = 0;            // loads minus unloads
  std::vector<Launch> launches;
};

// Returns the state, reset to the defaults above, with no context current on the calling
// thread: a test's first call.
using ResetFn = State* (*)();
constexpr const char* kResetSymbol = "fake_cuda_reset";

// The primary context the fake hands out, and another a test makes current as the caller's own
// (handles only: the fake never dereferences them).
inline CUcontext primary_context() { return reinterpret_cast<CUcontext>(0x1000); }
inline CUcontext other_context() { return reinterpret_cast<CUcontext>(0x2000); }

}  // namespace fake_cuda
