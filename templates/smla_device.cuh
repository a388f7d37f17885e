// Device helpers shared by every kernel template: integer types, PTX wrappers for the pipeline
// (cp.async, named barriers), tensor-core fragments (ldmatrix, mma.sync), and the
// fp8/bf16 conversions. Self-contained: no CUDA toolkit header, so NVRTC needs nothing but this
// text. Everything here runs on every arch of codegen/arch.h.
#pragma once

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long i64;

#define SMLA_DEVICE __device__ __forceinline__

namespace smla {

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

SMLA_DEVICE float neg_inf() { return __int_as_float(0xff800000u); }
SMLA_DEVICE float pos_inf() { return __int_as_float(0x7f800000u); }

SMLA_DEVICE u32 smem_u32(const void* pointer) {
  u32 address;
  asm volatile("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }"
               : "=r"(address)
               : "l"(pointer));
  return address;
}

// ---- asynchronous copies and barriers -------------------------------------------------------

// Copies 16 bytes global -> shared; src_bytes = 0 reads nothing and writes zeros.
SMLA_DEVICE void cp_async_16(u32 dst, const void* src, u32 src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(src_bytes)
               : "memory");
}
SMLA_DEVICE void cp_async_8(u32 dst, const void* src, u32 src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(dst), "l"(src), "r"(src_bytes)
               : "memory");
}
SMLA_DEVICE void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Waits until at most `kPending` of this thread's committed groups are still in flight.
template <int kPending>
SMLA_DEVICE void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
}
// Barrier `id` (1..15; 0 is __syncthreads) among `threads` threads, whole warps.
SMLA_DEVICE void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// Arrives at barrier `id` without waiting (a producer's half of named_barrier_sync).
SMLA_DEVICE void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// __syncthreads() that also returns whether `predicate` holds in any thread of the CTA.
SMLA_DEVICE bool syncthreads_any(bool predicate) {
  u32 result;
  asm volatile(
      "{ .reg .pred p, q; setp.ne.u32 p, %1, 0; bar.red.or.pred q, 0, p; selp.u32 %0, 1, 0, q; }"
      : "=r"(result)
      : "r"((u32)predicate)
      : "memory");
  return result != 0;
}

// Programmatic dependent launch (sm_90+): lets the next grid on the stream start launching, and
// waits until the grids this one depends on have completed and their writes are visible.
SMLA_DEVICE void launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}
SMLA_DEVICE void wait_for_prerequisites() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

// ---- tensor-core fragments ------------------------------------------------------------------

SMLA_DEVICE void ldmatrix_x2(u32 address, u32& r0, u32& r1) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
               : "=r"(r0), "=r"(r1)
               : "r"(address));
}

SMLA_DEVICE void ldmatrix_x4(u32 address, u32& r0, u32& r1, u32& r2, u32& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(address));
}
SMLA_DEVICE void ldmatrix_x4_trans(u32 address, u32& r0, u32& r1, u32& r2, u32& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(address));
}
// c += a * b with a 16x16 bf16 A (row), 16x8 bf16 B (col), fp32 accumulators.
SMLA_DEVICE void mma_bf16(float (&c)[4], const u32 (&a)[4], u32 b0, u32 b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// The same with f16 A and B.
SMLA_DEVICE void mma_f16(float (&c)[4], const u32 (&a)[4], u32 b0, u32 b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// c += a * b with a 16x32 e4m3 A (row), 32x8 e4m3 B (col), fp32 accumulators (sm_89 and later).
SMLA_DEVICE void mma_e4m3(float (&c)[4], const u32 (&a)[4], u32 b0, u32 b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// One value's maximum over the warp (all lanes take part).
SMLA_DEVICE u32 warp_max(u32 v) {
  u32 r;
  asm volatile("redux.sync.max.u32 %0, %1, 0xffffffff;" : "=r"(r) : "r"(v));
  return r;
}

// ---- conversions ----------------------------------------------------------------------------

SMLA_DEVICE float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
SMLA_DEVICE float log2_approx(float x) {
  float y;
  asm("lg2.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
// Packs two floats to bf16x2 (round to nearest even): `low` in bits 0..15.
SMLA_DEVICE u32 pack_bf16x2(float low, float high) {
  u32 packed;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(high), "f"(low));
  return packed;
}
SMLA_DEVICE float bf16_low(u32 pair) { return __int_as_float(pair << 16); }
SMLA_DEVICE float bf16_high(u32 pair) { return __int_as_float(pair & 0xffff0000u); }
SMLA_DEVICE u32 mul_bf16x2(u32 a, u32 b) {
  u32 product;
  asm("mul.rn.bf16x2 %0, %1, %2;" : "=r"(product) : "r"(a), "r"(b));
  return product;
}
SMLA_DEVICE u32 byte_perm(u32 a, u32 b, u32 selector) {
  u32 result;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(result) : "r"(a), "r"(b), "r"(selector));
  return result;
}

// Two e4m3 bytes of `x` (selected by `selector`, see below) to bf16x2 holding value * 2^-120,
// exactly (e4m3 subnormals become bf16 subnormals). NOTE: prmt's sign-replicating selector puts
// each byte's sign in the byte above it, so a shift by 4 lines the exponent and mantissa up with
// bf16's and the mask keeps the sign at bit 15 of each half: three integer ops per pair.
SMLA_DEVICE u32 e4m3x2_to_bf16x2_scaled(u32 x, u32 selector) {
  return (byte_perm(x, 0u, selector) << 4) & 0x87f087f0u;
}
// Selectors: bytes 0,1 of a word, and bytes 2,3.
constexpr u32 kBytes01 = 0x9180u;
constexpr u32 kBytes23 = 0xb3a2u;

// Four e4m3 values (one word) to two bf16x2 words, exactly: the conversion above, times 2^120.
SMLA_DEVICE void e4m3x4_to_bf16x2(u32 x, u32& low_pair, u32& high_pair) {
  const u32 unbias = 0x7b807b80u;  // bf16x2 (2^120, 2^120)
  low_pair = mul_bf16x2(e4m3x2_to_bf16x2_scaled(x, kBytes01), unbias);
  high_pair = mul_bf16x2(e4m3x2_to_bf16x2_scaled(x, kBytes23), unbias);
}
// Four e4m3 values (one word) to two f16x2 words, exactly (e4m3 fits in f16): bytes 0, 1 to
// `low_pair` and bytes 2, 3 to `high_pair`, the lower byte in the lower half.
SMLA_DEVICE void e4m3x4_to_f16x2(u32 x, u32& low_pair, u32& high_pair) {
  asm("{ .reg .b16 lo, hi; mov.b32 {lo, hi}, %2; cvt.rn.f16x2.e4m3x2 %0, lo; "
      "cvt.rn.f16x2.e4m3x2 %1, hi; }"
      : "=r"(low_pair), "=r"(high_pair)
      : "r"(x));
}
// Packs two floats to f16x2 (round to nearest even): `low` in bits 0..15.
SMLA_DEVICE u32 pack_f16x2(float low, float high) {
  u32 packed;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(high), "f"(low));
  return packed;
}
SMLA_DEVICE u32 mul_f16x2(u32 a, u32 b) {
  u32 product;
  asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(product) : "r"(a), "r"(b));
  return product;
}
// 2^(e - 127) for a ue8m0 byte e, as docs/semantics.md defines it (e = 0 is the fp32 subnormal
// 2^-127; e = 255 gives inf).
SMLA_DEVICE float ue8m0_value(u32 e) {
  return e == 0 ? __int_as_float(0x00400000u) : __int_as_float(e << 23);
}
// 2^k for an integer k in [-126, 127].
SMLA_DEVICE float pow2(int k) { return __int_as_float((u32)(k + 127) << 23); }

}  // namespace smla
