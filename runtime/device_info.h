// What smla reads about a device: its name, kernel architecture, SM count and driver version
// (the identity tuning rows are measured on).
#pragma once

#include <cuda.h>

#include <string>

#include "autotune/tuning.h"
#include "codegen/arch.h"
#include "runtime/cuda_driver.h"
#include "support/status.h"

namespace smla {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  const ArchSpec* arch = nullptr;  // nullptr for a compute capability smla does not run on
  int major = 0, minor = 0;
  int sm_count = 0;
  int driver_version = 0;

  TuningDevice tuning_device() const { return {name, sm_count, driver_version}; }
};

Status read_device_info(const CudaDriver& driver, CUdevice device, int ordinal, DeviceInfo* info);

}  // namespace smla
