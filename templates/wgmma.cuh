// Hopper's warpgroup MMA (wgmma.mma_async, sm_90a only): shared-memory matrix descriptors and
// the m64n64k16 bf16 -> fp32 products the wgmma decode kernel uses. Self-contained PTX like
// smla_device.cuh. A warpgroup is 4 consecutive warps; each of them holds 16 rows of the 64-row
// accumulator in the mma.sync m16n8 fragment order, eight n8 blocks after each other.
#pragma once

#include "smla_device.cuh"

namespace smla {

// A matrix descriptor (PTX ISA, "Matrix Descriptor Format") of a bf16 operand stored with the
// 128-byte swizzle: rows of 64 values (128 bytes), chunk i of row r at chunk i ^ (r % 8), in
// 1024-byte atoms of 8 rows. `leading` and `stride` are byte offsets: for a K-major operand the
// stride is the distance between 8-row groups and the leading offset is unused; for an MN-major
// one (the values of P V) the leading offset steps along MN between 64-value atoms and the
// stride steps along K between 8-row groups.
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
template <int kCount>
SMLA_DEVICE void pin(float (&d)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+f"(d[i])::"memory");
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

// d (+)= A B for a 64 x 16 A and a 16 x 64 B, both in shared memory; A K-major, B K-major
// (kTransB 0) or MN-major (1). `accumulate` 0 ignores d's old values.
template <int kTransB>
SMLA_DEVICE void wgmma_ss(float (&d)[32], u64 a, u64 b, int accumulate) {
  asm volatile(
      "{ .reg .pred p; setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " SMLA_WGMMA_D32
      ", %32, %33, p, 1, 1, 0, %35; }"
      : SMLA_WGMMA_D32_OPERANDS
      : "l"(a), "l"(b), "r"(accumulate), "n"(kTransB));
}

// d += A B with A's 64 x 16 bf16 fragments in registers (a warp's 16 rows in the mma.sync
// m16n8k16 A order) and B in shared memory.
template <int kTransB>
SMLA_DEVICE void wgmma_rs(float (&d)[32], const u32 (&a)[4], u64 b) {
  asm volatile(
      "{ .reg .pred p; setp.ne.b32 p, %38, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " SMLA_WGMMA_D32
      ", {%32, %33, %34, %35}, %36, p, 1, 1, %37; }"
      : SMLA_WGMMA_D32_OPERANDS
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "n"(kTransB), "r"(1));
}

#define SMLA_WGMMA_D16 \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"
#define SMLA_WGMMA_D16_OPERANDS                                                                   \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
      "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),    \
      "+f"(d[15])

// d (+)= A B for a 64 x 16 A and a 16 x 32 B, both K-major in shared memory (m64n32k16).
SMLA_DEVICE void wgmma_ss_n32(float (&d)[16], u64 a, u64 b, int accumulate) {
  asm volatile(
      "{ .reg .pred p; setp.ne.b32 p, %18, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 " SMLA_WGMMA_D16
      ", %16, %17, p, 1, 1, 0, 0; }"
      : SMLA_WGMMA_D16_OPERANDS
      : "l"(a), "l"(b), "r"(accumulate));
}

// d += A B for a 64 x 16 A and a 16 x 256 MN-major B (m64n256k16), A in shared memory (K-major)
// or as registers (a warp's 16 rows in the mma.sync m16n8k16 A order).
#define SMLA_WGMMA_D128 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}"
#define SMLA_WGMMA_D128_OPERANDS "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
SMLA_DEVICE void wgmma_ss_n256(float (&d)[128], u64 a, u64 b) {
  asm volatile(
      "{ .reg .pred p; setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " SMLA_WGMMA_D128
      ", %128, %129, p, 1, 1, 0, 1; }"
      : SMLA_WGMMA_D128_OPERANDS
      : "l"(a), "l"(b), "r"(1));
}
SMLA_DEVICE void wgmma_rs_n256(float (&d)[128], const u32 (&a)[4], u64 b) {
  asm volatile(
      "{ .reg .pred p; setp.ne.b32 p, %133, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " SMLA_WGMMA_D128
      ", {%128, %129, %130, %131}, %132, p, 1, 1, 1; }"
      : SMLA_WGMMA_D128_OPERANDS
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));
}
#undef SMLA_WGMMA_D128
#undef SMLA_WGMMA_D128_OPERANDS

#undef SMLA_WGMMA_D16
#undef SMLA_WGMMA_D16_OPERANDS
#undef SMLA_WGMMA_D32
#undef SMLA_WGMMA_D32_OPERANDS

}  // namespace smla
