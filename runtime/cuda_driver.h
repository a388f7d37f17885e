// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1") so that libsmla loads and
// runs its CPU paths on machines without a GPU or a driver. runtime/ is the only layer that
// talks to the driver; tools and tests reach the device through runtime's helpers.
#pragma once

#include <cuda.h>

#include <memory>

#include "support/status.h"

namespace smla {

// clang-format off
#define SMLA_DRIVER_FUNCTIONS(X) \
  X(cuInit) X(cuDriverGetVersion) X(cuDeviceGetCount) X(cuDeviceGet) \
  X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDevicePrimaryCtxRetain) \
  X(cuDevicePrimaryCtxRelease) \
  X(cuCtxGetCurrent) X(cuCtxPushCurrent) X(cuCtxPopCurrent) X(cuModuleLoadData) \
  X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncGetAttribute) X(cuFuncSetAttribute) \
  X(cuCtxGetLimit) X(cuCtxSetLimit) X(cuLaunchKernelEx) \
  X(cuStreamIsCapturing) X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) \
  X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuGraphInstantiateWithFlags) X(cuGraphLaunch) \
  X(cuGraphExecDestroy) X(cuGraphDestroy) X(cuMemAlloc) X(cuMemFree) \
  X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemsetD8) X(cuEventCreate) \
  X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime) X(cuEventDestroy) \
  X(cuGetErrorName) X(cuGetErrorString)
// clang-format on

class CudaDriver {
 public:
  // The process-wide driver, or null with the reason in `status` (no libcuda, too old, or
  // cuInit failed). Loading happens once; later calls return the same answer.
  static const CudaDriver* get(Status* status);

  // SMLA_ERR_CUDA naming the call and the driver's error, or ok.
  Status check(CUresult result, const char* what) const;

// NOLINTNEXTLINE(bugprone-macro-parentheses): `name` names a declaration, not an expression
#define SMLA_DECLARE_DRIVER_FUNCTION(name) decltype(&::name) name = nullptr;
  SMLA_DRIVER_FUNCTIONS(SMLA_DECLARE_DRIVER_FUNCTION)
#undef SMLA_DECLARE_DRIVER_FUNCTION

 private:
  CudaDriver() = default;
  static std::unique_ptr<CudaDriver> load(Status* status);
};

}  // namespace smla
