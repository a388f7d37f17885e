#include "runtime/device_info.h"

#include "codegen/arch.h"

namespace smla {

Status read_device_info(const CudaDriver& d, CUdevice device, int ordinal, DeviceInfo* info) {
  char name[256] = {0};
  SMLA_TRY(d.check(d.cuDeviceGetName(name, sizeof(name) - 1, device), "cuDeviceGetName"));
  const auto attribute = [&](CUdevice_attribute which, int* value) {
    return d.check(d.cuDeviceGetAttribute(value, which, device), "cuDeviceGetAttribute");
  };
  SMLA_TRY(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &info->major));
  SMLA_TRY(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &info->minor));
  SMLA_TRY(attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info->sm_count));
  SMLA_TRY(d.check(d.cuDriverGetVersion(&info->driver_version), "cuDriverGetVersion"));
  info->ordinal = ordinal;
  info->name = name;
  info->arch = arch_for_compute_capability(info->major, info->minor);
  return ok_status();
}

}  // namespace smla
