// Device access for tools and tests (`smla check`, `smla bench`, tests/gpu): the driver, one
// device's primary context made current on the calling thread, device buffers, streams,
// events and graph capture. The library's own calls never use this; it exists so that the
// layers above runtime reach the GPU through runtime, as the design requires.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "runtime/cuda_driver.h"
#include "runtime/device_info.h"
#include "support/status.h"

namespace smla {

class DeviceSession;

// A device allocation freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  ~DeviceBuffer();

  void* get() const { return reinterpret_cast<void*>(pointer_); }
  size_t size() const { return bytes_; }
  Status upload(const void* host, size_t bytes, size_t offset = 0) const;
  Status download(void* host, size_t bytes, size_t offset = 0) const;
  Status fill(unsigned char value) const;  // synchronous memset of the whole buffer

 private:
  friend class DeviceSession;
  const CudaDriver* driver_ = nullptr;
  CUdeviceptr pointer_ = 0;
  size_t bytes_ = 0;
};

class DeviceSession {
 public:
  // SMLA_ERR_NO_DEVICE when there is no driver or no device.
  static Status open(int ordinal, std::unique_ptr<DeviceSession>* session);
  ~DeviceSession();

  const CudaDriver& driver() const { return *driver_; }
  Status info(DeviceInfo* info) const;  // as a context on this device reads it
  Status allocate(size_t bytes, DeviceBuffer* buffer) const;
  Status create_stream(CUstream* stream) const;
  Status synchronize(CUstream stream) const;
  Status elapsed_ms(CUevent start, CUevent stop, float* ms) const;
  // Device memory for `bytes` in one allocation, or an error naming the size.
  Status copy_to_device(const std::vector<unsigned char>& host, DeviceBuffer* buffer) const;

 private:
  DeviceSession() = default;
  const CudaDriver* driver_ = nullptr;
  CUdevice device_ = 0;
  int ordinal_ = 0;
  CUcontext context_ = nullptr;
  bool retained_ = false;  // the primary context, by open()
  bool pushed_ = false;    // made current by open()
};

}  // namespace smla
