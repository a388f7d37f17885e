// Bulk copies by the tensor memory accelerator (cp.async.bulk, sm_90 and later) and the shared-
// memory barriers (mbarrier) they complete on. Self-contained PTX like smla_device.cuh.
#pragma once

#include "smla_device.cuh"

namespace smla {

// Initializes the barrier at `barrier` (8 bytes, 8-byte aligned) for `arrivals` arrivals per
// phase; a barrier (block-wide or named) must follow before any thread uses it.
SMLA_DEVICE void mbarrier_init(u32 barrier, u32 arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(barrier), "r"(arrivals) : "memory");
}

// Arrives once and adds `bytes` to the transactions the current phase waits for.
SMLA_DEVICE void mbarrier_arrive_expect_bytes(u32 barrier, u32 bytes) {
  asm volatile(
      "{ .reg .b64 state; mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1; }" ::"r"(
          barrier),
      "r"(bytes)
      : "memory");
}

// Waits until the phase of parity `parity` (0 for the first phase, then alternating) completes;
// the bulk copies that completed on it are then visible to this thread.
SMLA_DEVICE void mbarrier_wait(u32 barrier, u32 parity) {
  u32 done = 0u;
  while (done == 0u) {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; "
        "selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(barrier), "r"(parity)
        : "memory");
  }
}

// Copies `bytes` (a multiple of 16; both addresses 16-byte aligned) global -> shared, completing
// on `barrier` as that many transaction bytes.
SMLA_DEVICE void bulk_copy(u32 destination, const void* source, u32 bytes, u32 barrier) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(destination),
      "l"(source), "r"(bytes), "r"(barrier)
      : "memory");
}

}  // namespace smla
