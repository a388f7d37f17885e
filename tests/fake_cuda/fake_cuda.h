// A fake CUDA driver: tests/fake_cuda builds it as libcuda.so.1, and the fake-driver tests
// (tests/cpu/fake_driver) run with it first on LD_LIBRARY_PATH, so the runtime's driver paths
// (contexts, module loads, launches and their failures) run on a machine without a GPU. It
// reports one Hopper device, keeps a per-thread stack of current contexts, checks that module
// loads and launches happen with a context current, records every launch, and fails the call
// the test names. Nothing runs: a launch is a record.
#pragma once

#include <cuda.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace fake_cuda {

struct Launch {
  std::string function;  // the entry point the function was got by
  unsigned grid = 0;     // gridDimX (Y and Z must be 1)
  unsigned block = 0;    // blockDimX (Y and Z must be 1)
  unsigned shared_bytes = 0;
  bool programmatic = false;  // the programmatic stream serialization attribute, set to 1
  CUstream stream = nullptr;
};

struct State {
  std::mutex mutex;
  // The device.
  int device_count = 1;
  int major = 9, minor = 0;
  int sm_count = 132;
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  // Failure injection: the call named `fail_call` (its base name, e.g. "cuModuleLoadData")
  // returns `fail_result` once `calls` counts `fail_after` calls of it, and every time after.
  std::string fail_call;
  int fail_after = 0;
  CUresult fail_result = CUDA_ERROR_UNKNOWN;
  // What happened.
  std::map<std::string, int> calls;  // calls by base name, failed ones included
  int primary_retained = 0;          // retains minus releases
  int modules_loaded = 0;            // loads minus unloads
  int calls_without_context = 0;     // module loads, function lookups and launches
  std::vector<Launch> launches;
};

// Returns the state, reset to the defaults above: a test's first call.
using ResetFn = State* (*)();
constexpr const char* kResetSymbol = "fake_cuda_reset";

// The primary context the fake hands out, and another a test makes current as the caller's own
// (handles only: the fake never dereferences them).
inline CUcontext primary_context() { return reinterpret_cast<CUcontext>(0x1000); }
inline CUcontext other_context() { return reinterpret_cast<CUcontext>(0x2000); }

}  // namespace fake_cuda
