#include "harness/device_session.h"

#include <utility>

#include "codegen/kernel_key.h"

namespace smla {

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (pointer_ != 0) driver_->cuMemFree(pointer_);
    driver_ = other.driver_;
    pointer_ = std::exchange(other.pointer_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (pointer_ != 0) driver_->cuMemFree(pointer_);
}

Status DeviceBuffer::upload(const void* host, size_t bytes, size_t offset) const {
  if (offset + bytes > bytes_)
    return error(SMLA_ERR_INTERNAL, "upload of {} bytes at {} past a {}-byte buffer", bytes, offset,
                 bytes_);
  if (bytes == 0) return ok_status();
  return driver_->check(driver_->cuMemcpyHtoD(pointer_ + offset, host, bytes), "cuMemcpyHtoD");
}

Status DeviceBuffer::download(void* host, size_t bytes, size_t offset) const {
  if (offset + bytes > bytes_)
    return error(SMLA_ERR_INTERNAL, "download of {} bytes at {} past a {}-byte buffer", bytes,
                 offset, bytes_);
  if (bytes == 0) return ok_status();
  return driver_->check(driver_->cuMemcpyDtoH(host, pointer_ + offset, bytes), "cuMemcpyDtoH");
}

Status DeviceBuffer::fill(unsigned char value) const {
  if (bytes_ == 0) return ok_status();
  return driver_->check(driver_->cuMemsetD8(pointer_, value, bytes_), "cuMemsetD8");
}

Status DeviceSession::open(int ordinal, std::unique_ptr<DeviceSession>* session) {
  Status status;
  const CudaDriver* driver = CudaDriver::get(&status);
  if (driver == nullptr) return status;
  int count = 0;
  SMLA_TRY(driver->check(driver->cuDeviceGetCount(&count), "cuDeviceGetCount"));
  if (ordinal < 0 || ordinal >= count)
    return error(SMLA_ERR_NO_DEVICE, "no device {} ({} present)", ordinal, count);
  std::unique_ptr<DeviceSession> s(new DeviceSession());
  s->driver_ = driver;
  SMLA_TRY(driver->check(driver->cuDeviceGet(&s->device_, ordinal), "cuDeviceGet"));
  s->ordinal_ = ordinal;
  SMLA_TRY(driver->check(driver->cuDevicePrimaryCtxRetain(&s->context_, s->device_),
                         "cuDevicePrimaryCtxRetain"));
  s->retained_ = true;
  SMLA_TRY(driver->check(driver->cuCtxPushCurrent(s->context_), "cuCtxPushCurrent"));
  s->pushed_ = true;
  *session = std::move(s);
  return ok_status();
}

// Undoes only what open() did: after a failed open, the caller's current context stays.
DeviceSession::~DeviceSession() {
  CUcontext popped = nullptr;
  if (pushed_) driver_->cuCtxPopCurrent(&popped);
  if (retained_) driver_->cuDevicePrimaryCtxRelease(device_);
}

Status DeviceSession::info(DeviceInfo* info) const {
  return read_device_info(*driver_, device_, ordinal_, info);
}

Status DeviceSession::allocate(size_t bytes, DeviceBuffer* buffer) const {
  DeviceBuffer fresh;
  fresh.driver_ = driver_;
  if (bytes > 0) {
    SMLA_TRY(driver_->check(driver_->cuMemAlloc(&fresh.pointer_, bytes), "cuMemAlloc"));
  }
  fresh.bytes_ = bytes;
  *buffer = std::move(fresh);
  return ok_status();
}

Status DeviceSession::copy_to_device(const std::vector<unsigned char>& host,
                                     DeviceBuffer* buffer) const {
  SMLA_TRY(allocate(host.size(), buffer));
  return buffer->upload(host.data(), host.size());
}

Status DeviceSession::create_stream(CUstream* stream) const {
  return driver_->check(driver_->cuStreamCreate(stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
}

Status DeviceSession::synchronize(CUstream stream) const {
  return driver_->check(driver_->cuStreamSynchronize(stream), "cuStreamSynchronize");
}

Status DeviceSession::elapsed_ms(CUevent start, CUevent stop, float* ms) const {
  SMLA_TRY(driver_->check(driver_->cuEventSynchronize(stop), "cuEventSynchronize"));
  return driver_->check(driver_->cuEventElapsedTime(ms, start, stop), "cuEventElapsedTime");
}

}  // namespace smla
