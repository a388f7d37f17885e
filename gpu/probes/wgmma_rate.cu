// The rate of the wgmma kernel's products in isolation: cycles per m64n64k16 bf16 wgmma (both
// operands in shared memory unless said) when every SM runs one CTA that repeats them, as the
// score product S = Q K^T (B K-major, 32 k-steps a tile) or the value product P V (B MN-major).
// Compares one accumulator chain with independent ones, and one warpgroup with two.
// Not part of the library: gpu/carry.sh builds it with nvcc when nvcc is present, and
// `gpu/round.sh wgmma-rate` runs it on the H200 machine.
//   nvcc -O3 -std=c++17 -I. -gencode=arch=compute_90a,code=sm_90a -o wgmma_rate gpu/probes/wgmma_rate.cu
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "templates/wgmma.cuh"
#include "gpu/probes/cuda_check.h"

namespace {

using namespace smla;

constexpr int kSteps = 32;            // k-steps of one S (512 dims)
constexpr int kOperandBytes = 65536;  // 64 rows x 512 bf16 values, in 8 column blocks
constexpr int kIterations = 2000;

// Each warpgroup runs kIterations rounds of kSteps products into kChains independent
// accumulators (step k into chain k % kChains), waiting at the end of each round, like a tile's
// S. kTransB 1 reads B MN-major (P V's values); kRegisterA takes A from registers (P V of
// warpgroup 0). Thread 0 of each warpgroup writes its cycles and nanoseconds.
// With `other` set, warpgroup 1 does not multiply: it stores 64 KB to its own shared memory a
// round (other 1) or loads 37 KB of random 16-byte chunks of `pool` a round (other 2), as the
// wgmma kernel's dequantization does beside the products.
template <int kChains, int kTransB, bool kRegisterA>
__global__ void __launch_bounds__(256, 1)
    products(int groups, int other, const uint4* pool, unsigned long long pool_chunks, float* sink,
             unsigned long long* cycles, unsigned long long* nanos) {
  extern __shared__ __align__(1024) unsigned char smem[];
  unsigned char* base = smem + ((1024u - (smem_u32(smem) & 1023u)) & 1023u);
  for (int i = threadIdx.x; i < 2 * kOperandBytes / 4; i += blockDim.x) {
    ((u32*)base)[i] = 0x3c003c00u ^ ((u32)i * 0x00010001u & 0x003f003fu);  // small bf16 values
  }
  fence_proxy_async();
  __syncthreads();
  const int group = __shfl_sync(0xffffffffu, (int)threadIdx.x / 128, 0);
  if (other != 0 && group == 1) {
    uint4 acc = make_uint4(0u, 0u, 0u, 0u);
    const int lane = threadIdx.x % 128;
    for (int it = 0; it < kIterations; ++it) {
      if (other == 1) {
        for (int i = lane; i < kOperandBytes / 16; i += 128) {
          ((uint4*)(base + 2 * kOperandBytes))[i] = make_uint4(it, i, it ^ i, 7u);
        }
      } else {
        for (int i = lane; i < 64 * 36; i += 128) {
          const unsigned long long h =
              ((unsigned long long)(blockIdx.x * 7919u + it * 104729u + i / 36) * 2654435761ull) %
              (pool_chunks / 36);
          const uint4 v = pool[h * 36 + i % 36];
          acc.x ^= v.x, acc.y ^= v.y, acc.z ^= v.z, acc.w ^= v.w;
        }
      }
      asm volatile("bar.sync 1, 128;" ::: "memory");
    }
    if (acc.x == 12345u) sink[blockIdx.x] = (float)acc.y;
    return;
  }
  if (group >= groups) return;
  const u64 a = sw128_descriptor(smem_u32(base), 16, 1024);
  const u64 b = kTransB ? sw128_descriptor(smem_u32(base) + kOperandBytes, 8192, 1024)
                        : sw128_descriptor(smem_u32(base) + kOperandBytes, 16, 1024);
  u32 fragments[4][4];  // P's four k-steps (registers), as warpgroup 0 holds them
  for (int k = 0; k < 4; ++k)
    for (int r = 0; r < 4; ++r) fragments[k][r] = 0x3c003c00u ^ (threadIdx.x * 4 + k * 16 + r);
  float d[kChains][32];
  for (int c = 0; c < kChains; ++c)
    for (int i = 0; i < 32; ++i) d[c][i] = 0.0f;
  unsigned long long start_ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start_ns));
  const long long start = clock64();
  for (int it = 0; it < kIterations; ++it) {
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < kSteps; ++k) {
      // S: k-step k of a K-major pair; P V: k-step k % 4 of 16 entries, block k / 4 % 4.
      const u32 a_offset = kTransB ? (k % 4) * 32 : (k / 4) * 8192 + (k % 4) * 32;
      const u32 b_offset =
          kTransB ? (k / 4 % 4) * 8192 + (k % 4) * 16 * 128 : (k / 4) * 8192 + (k % 4) * 32;
      if (kRegisterA) {
        wgmma_rs<kTransB>(d[k % kChains], fragments[k % 4], advance_descriptor(b, b_offset));
      } else {
        wgmma_ss<kTransB>(d[k % kChains], advance_descriptor(a, a_offset),
                          advance_descriptor(b, b_offset), 1);
      }
    }
    wgmma_commit();
    wgmma_wait<0>();
    for (int c = 0; c < kChains; ++c) pin(d[c]);
  }
  const long long elapsed = clock64() - start;
  unsigned long long end_ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(end_ns));
  float total = 0.0f;
  for (int c = 0; c < kChains; ++c)
    for (int i = 0; i < 32; ++i) total += d[c][i];
  if (total == 1.0f) sink[blockIdx.x] = total;  // keeps the products
  if (threadIdx.x % 128 == 0) {
    cycles[blockIdx.x * 2 + group] = (unsigned long long)elapsed;
    nanos[blockIdx.x * 2 + group] = end_ns - start_ns;
  }
}

template <int kChains, int kTransB, bool kRegisterA>
void run(const char* name, int groups, int ctas, int other = 0) {
  auto kernel = products<kChains, kTransB, kRegisterA>;
  const int smem = 3 * kOperandBytes + 1024;
  static uint4* pool = nullptr;
  const unsigned long long pool_chunks = (1ull << 30) / 16;  // 1 GB
  if (pool == nullptr) {
    CHECK(cudaMalloc(&pool, pool_chunks * 16));
    CHECK(cudaMemset(pool, 0x3c, pool_chunks * 16));
  }
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  float* sink;
  unsigned long long *cycles, *nanos;
  CHECK(cudaMalloc(&sink, ctas * sizeof(float)));
  CHECK(cudaMalloc(&cycles, ctas * 2 * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&nanos, ctas * 2 * sizeof(unsigned long long)));
  kernel<<<ctas, 256, smem>>>(groups, other, pool, pool_chunks, sink, cycles, nanos);  // warm-up
  kernel<<<ctas, 256, smem>>>(groups, other, pool, pool_chunks, sink, cycles, nanos);
  CHECK(cudaDeviceSynchronize());
  unsigned long long c = 0, n = 0;
  CHECK(cudaMemcpy(&c, cycles, sizeof(c), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&n, nanos, sizeof(n), cudaMemcpyDeviceToHost));
  const double products = (double)kIterations * kSteps;
  const double per_product = c / products;
  const double ghz = (double)c / (double)n;
  // FLOPs of one SM: every warpgroup's products, 2 * 64 * 64 * 16 each.
  const double tflops = groups * products * 2.0 * 64 * 64 * 16 * ctas / (n * 1e-9) / 1e12;
  std::printf("%-52s %2d warpgroup(s) %4d CTAs  %6.1f cycles/product  %.2f GHz  %6.1f TFLOPS\n",
              name, groups, ctas, per_product, ghz, tflops);
  CHECK(cudaFree(sink));
  CHECK(cudaFree(cycles));
  CHECK(cudaFree(nanos));
}

}  // namespace

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::printf("one CTA per SM (%d), m64n64k16 bf16 -> fp32, %d rounds of %d products\n", sms,
              kIterations, kSteps);
  run<1, 0, false>("S-like: B K-major, one chain", 1, sms);
  run<2, 0, false>("S-like: two chains", 1, sms);
  run<4, 0, false>("S-like: four chains", 1, sms);
  run<1, 0, false>("S-like: one chain, one CTA alone", 1, 1);
  run<1, 0, false>("S-like: one chain in each", 2, sms);
  run<4, 1, false>("P V-like: B MN-major, four accumulators", 1, sms);
  run<4, 1, true>("P V-like: A from registers", 1, sms);
  run<4, 1, false>("P V-like: four accumulators in each", 2, sms);
  run<1, 0, false>("S-like beside 64 KB of shared stores a round", 1, sms, 1);
  run<1, 0, false>("S-like beside 37 KB of random global loads a round", 1, sms, 2);
  return 0;
}
