#include "runtime/cuda_driver.h"

#include <dlfcn.h>

#include <mutex>

namespace smla {
namespace {

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult*);

}  // namespace

std::unique_ptr<CudaDriver> CudaDriver::load(Status* status) {
  // The handle is never closed: the driver stays loaded for the life of the process.
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    *status =
        error(SMLA_ERR_NO_DEVICE, "no CUDA driver: dlopen(libcuda.so.1) failed: {}", dlerror());
    return nullptr;
  }
  auto get_proc = reinterpret_cast<GetProcAddress>(dlsym(library, "cuGetProcAddress_v2"));
  if (get_proc == nullptr) {
    *status = error(SMLA_ERR_NO_DEVICE, "the CUDA driver is too old (no cuGetProcAddress_v2)");
    return nullptr;
  }
  std::unique_ptr<CudaDriver> driver(new CudaDriver());
  // NOTE: asking for the symbol by its base name at the header's CUDA_VERSION returns the ABI
  // version cuda.h declares (cuMemAlloc -> cuMemAlloc_v2), matching the decltype above.
#define SMLA_LOAD_DRIVER_FUNCTION(name)                                                            \
  {                                                                                                \
    void* fn = nullptr;                                                                            \
    CUdriverProcAddressQueryResult found;                                                          \
    if (get_proc(#name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS || \
        fn == nullptr) {                                                                           \
      *status = error(SMLA_ERR_NO_DEVICE, "the CUDA driver lacks {}", #name);                      \
      return nullptr;                                                                              \
    }                                                                                              \
    driver->name = reinterpret_cast<decltype(driver->name)>(fn);                                   \
  }
  SMLA_DRIVER_FUNCTIONS(SMLA_LOAD_DRIVER_FUNCTION)
#undef SMLA_LOAD_DRIVER_FUNCTION

  const CUresult init = driver->cuInit(0);
  if (init != CUDA_SUCCESS) {
    *status = error(init == CUDA_ERROR_NO_DEVICE ? SMLA_ERR_NO_DEVICE : SMLA_ERR_CUDA, "{}",
                    driver->check(init, "cuInit").message());
    return nullptr;
  }
  *status = ok_status();
  return driver;
}

const CudaDriver* CudaDriver::get(Status* status) {
  static std::once_flag once;
  static std::unique_ptr<CudaDriver> driver;
  static Status load_status;
  std::call_once(once, [] { driver = load(&load_status); });
  *status = load_status;
  return driver.get();
}

Status CudaDriver::check(CUresult result, const char* what) const {
  if (result == CUDA_SUCCESS) return ok_status();
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName != nullptr) cuGetErrorName(result, &name);
  if (cuGetErrorString != nullptr) cuGetErrorString(result, &text);
  return error(SMLA_ERR_CUDA, "{} failed: {} ({})", what, name ? name : "CUDA error",
               text ? text : std::to_string(static_cast<int>(result)));
}

}  // namespace smla
