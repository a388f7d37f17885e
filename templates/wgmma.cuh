// Hopper's warpgroup MMA (wgmma.mma_async, sm_90a only): shared-memory matrix descriptors and
// the products the wgmma decode kernel uses (m64n64k16 bf16 or f16, m64n64k32 e4m3; fp32 sums).
// Self-contained PTX like smla_device.cuh. A warpgroup is 4 consecutive warps; each of them holds
// 16 rows of the 64-row accumulator in the mma.sync m16n8 fragment order, eight n8 blocks after
// each other.
#pragma once

#include "smla_device.cuh"

namespace smla {

// A matrix descriptor (PTX ISA, "Matrix Descriptor Format") of an operand stored with the
// 128-byte swizzle: rows of 128 bytes (64 16-bit or 128 8-bit values), chunk i of row r at
// chunk i ^ (r % 8), in 1024-byte atoms of 8 rows. `leading` and `stride` are byte offsets: for a
// K-major operand the stride is the distance between 8-row groups and the leading offset is unused;
// for an MN-major one (the values of P V) the leading offset steps along MN between 64-value atoms
// and the stride steps along K between 8-row groups.
SMLA_DEVICE u64 sw128_descriptor(u32 address, u32 leading, u32 stride) {
  return (u64)((address & 0x3ffffu) >> 4) | ((u64)(leading >> 4) << 16) |
         ((u64)(stride >> 4) << 32) | (1ull << 62);
}
// The same descriptor `bytes` further (16-byte aligned, inside the 256 KB window).
SMLA_DEVICE u64 advance_descriptor(u64 descriptor, u32 bytes) { return descriptor + (bytes >> 4); }

SMLA_DEVICE void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
SMLA_DEVICE void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int kPending>
SMLA_DEVICE void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}
// Makes this thread's shared-memory writes visible to the async proxy (wgmma operand reads).
SMLA_DEVICE void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// NOTE: the accumulators of an issued wgmma belong to the tensor cores until wgmma_wait; this
// empty asm ties each register to the point where it is called, so the compiler moves no read
// or write of them across the issue or the wait.
SMLA_DEVICE void pin(float (&d)[32]) {
#pragma unroll
  for (int i = 0; i < 32; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

#define SMLA_WGMMA_D32                                                                          \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define SMLA_WGMMA_D32_OPERANDS                                                                   \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
      "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),    \
      "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),  \
      "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),  \
      "+f"(d[29]), "+f"(d[30]), "+f"(d[31])

// d (+)= A B for a 64 x 16 A and a 16 x 64 B, both in shared memory, bf16 (f16 with kF16);
// A K-major, B K-major (kTransB 0) or MN-major (1). `accumulate` 0 ignores d's old values.
#define SMLA_WGMMA_SS(TYPE)                                                          \
  asm volatile(                                                                      \
      "{ .reg .pred p; setp.ne.b32 p, %34, 0;\n"                                     \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " " SMLA_WGMMA_D32 \
      ", %32, %33, p, 1, 1, 0, %35; }"                                               \
      : SMLA_WGMMA_D32_OPERANDS                                                      \
      : "l"(a), "l"(b), "r"(accumulate), "n"(kTransB))
template <int kTransB, bool kF16 = false>
SMLA_DEVICE void wgmma_ss(float (&d)[32], u64 a, u64 b, int accumulate) {
  if (kF16) {
    SMLA_WGMMA_SS("f16");
  } else {
    SMLA_WGMMA_SS("bf16");
  }
}

// d += A B with A's 64 x 16 fragments in registers (a warp's 16 rows in the mma.sync m16n8k16
// A order), bf16 (f16 with kF16), and B in shared memory.
#define SMLA_WGMMA_RS(TYPE)                                                          \
  asm volatile(                                                                      \
      "{ .reg .pred p; setp.ne.b32 p, %38, 0;\n"                                     \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " " SMLA_WGMMA_D32 \
      ", {%32, %33, %34, %35}, %36, p, 1, 1, %37; }"                                 \
      : SMLA_WGMMA_D32_OPERANDS                                                      \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "n"(kTransB), "r"(1))
template <int kTransB, bool kF16 = false>
SMLA_DEVICE void wgmma_rs(float (&d)[32], const u32 (&a)[4], u64 b) {
  if (kF16) {
    SMLA_WGMMA_RS("f16");
  } else {
    SMLA_WGMMA_RS("bf16");
  }
}

// d (+)= A B for a 64 x 32 A and a 32 x 64 B of e4m3 values, both K-major in shared memory
// (8-bit operands have no MN-major form).
SMLA_DEVICE void wgmma_e4m3_ss(float (&d)[32], u64 a, u64 b, int accumulate) {
  asm volatile(
      "{ .reg .pred p; setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 " SMLA_WGMMA_D32
      ", %32, %33, p, 1, 1; }"
      : SMLA_WGMMA_D32_OPERANDS
      : "l"(a), "l"(b), "r"(accumulate));
}

#undef SMLA_WGMMA_SS
#undef SMLA_WGMMA_RS
#undef SMLA_WGMMA_D32
#undef SMLA_WGMMA_D32_OPERANDS

}  // namespace smla
