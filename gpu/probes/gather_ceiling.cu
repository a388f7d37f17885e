// The gather ceiling as a function of the KV pool's size: read random 576-byte rows (a packed
// token without its scales) of a pool of N GB and report TB/s, with two thread mappings:
//   warp:  one warp per row, 16-byte loads (how shared/GPU.md's ceiling was measured);
//   quad:  4 threads per row, 9 loads each 64 bytes apart (the decode kernels' gather).
// Not part of the library: gpu/carry.sh builds it with nvcc when nvcc is present, and
// `gpu/round.sh ceiling` runs it on the H200 machine.
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o gather_ceiling gpu/probes/gather_ceiling.cu
//   gather_ceiling [pool GB ...]        (default: 0.25 1 2 8 32)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "cuda_check.h"

namespace {

constexpr int kRowBytes = 576;
constexpr int kRowsPerCall = 256 * 1152;  // 256 decode rows of 128 + 1024 entries
constexpr int kSets = 8;                  // index tables rotated between calls
constexpr int kThreads = 256;

__global__ void fill(uint4* pool, size_t words) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words;
       i += (size_t)gridDim.x * blockDim.x) {
    const unsigned h = (unsigned)(i * 2654435761u) ^ (unsigned)(i >> 32);
    pool[i] = make_uint4(h, h * 3u, h * 5u, h * 7u);
  }
}

__device__ uint4 load16(const unsigned char* p) {
  uint4 v;
  asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// The XOR of everything read goes to `sink`, so no load can be dropped.
__global__ void gather_warp(const unsigned char* pool, const int* rows, unsigned* sink) {
  const int lane = threadIdx.x & 31;
  const int row = blockIdx.x * (kThreads / 32) + threadIdx.x / 32;
  if (row >= kRowsPerCall) return;
  const unsigned char* base = pool + (size_t)rows[row] * kRowBytes;
  uint4 v = load16(base + 16 * lane);
  if (lane < (kRowBytes - 512) / 16) {
    const uint4 w = load16(base + 512 + 16 * lane);
    v.x ^= w.x, v.y ^= w.y, v.z ^= w.z, v.w ^= w.w;
  }
  const unsigned x = v.x ^ v.y ^ v.z ^ v.w;
  if (x == 0x12345678u) sink[0] = x;
}

__global__ void gather_quad(const unsigned char* pool, const int* rows, unsigned* sink) {
  const int row = blockIdx.x * (kThreads / 4) + threadIdx.x / 4;
  if (row >= kRowsPerCall) return;
  const unsigned char* base = pool + (size_t)rows[row] * kRowBytes + 16 * (threadIdx.x % 4);
  unsigned x = 0;
#pragma unroll
  for (int j = 0; j < kRowBytes / 64; ++j) {
    const uint4 v = load16(base + 64 * j);
    x ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (x == 0x12345678u) sink[0] = x;
}

template <typename Launch>
double median_us(Launch launch, cudaEvent_t start, cudaEvent_t stop) {
  constexpr int kIters = 20;
  for (int i = 0; i < kSets; ++i) launch(i);  // warm-up
  std::vector<float> ms;
  for (int r = 0; r < 7; ++r) {
    CHECK(cudaEventRecord(start));
    for (int i = 0; i < kIters; ++i) launch(i % kSets);
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  CHECK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  return ms[3] * 1e3 / kIters;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> pools_gb;
  for (int i = 1; i < argc; ++i) pools_gb.push_back(std::atof(argv[i]));
  if (pools_gb.empty()) pools_gb = {0.25, 1, 2, 8, 32};
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  unsigned* sink;
  CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  int* rows;
  CHECK(cudaMalloc(&rows, sizeof(int) * kRowsPerCall * kSets));
  std::printf("%-8s %-5s %9s %8s\n", "pool GB", "map", "us", "TB/s");
  for (const double gb : pools_gb) {
    const size_t pool_rows = (size_t)(gb * 1e9) / kRowBytes;
    if (pool_rows < 1 || pool_rows > (size_t)INT32_MAX) {
      std::fprintf(stderr, "pool of %g GB: out of range\n", gb);
      return 1;
    }
    unsigned char* pool;
    CHECK(cudaMalloc(&pool, pool_rows * kRowBytes));
    fill<<<1024, 256>>>((uint4*)pool, pool_rows * kRowBytes / 16);
    std::mt19937_64 rng(42);
    std::vector<int> host(kRowsPerCall * (size_t)kSets);
    for (int& r : host) r = (int)(rng() % pool_rows);
    CHECK(cudaMemcpy(rows, host.data(), host.size() * sizeof(int), cudaMemcpyHostToDevice));
    const double bytes = (double)kRowsPerCall * kRowBytes;
    const double warp_us = median_us(
        [&](int set) {
          gather_warp<<<kRowsPerCall / (kThreads / 32), kThreads>>>(pool, rows + set * kRowsPerCall,
                                                                     sink);
        },
        start, stop);
    const double quad_us = median_us(
        [&](int set) {
          gather_quad<<<kRowsPerCall / (kThreads / 4), kThreads>>>(pool, rows + set * kRowsPerCall,
                                                                    sink);
        },
        start, stop);
    std::printf("%-8g %-5s %9.2f %8.3f\n", gb, "warp", warp_us, bytes / warp_us * 1e-6);
    std::printf("%-8g %-5s %9.2f %8.3f\n", gb, "quad", quad_us, bytes / quad_us * 1e-6);
    CHECK(cudaFree(pool));
  }
  return 0;
}
