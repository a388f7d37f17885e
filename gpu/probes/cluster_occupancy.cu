// How many 2-CTA clusters of the 16-head entries-on-M kernel's shape (256 threads, 98,816 bytes of
// dynamic shared memory; its 128 registers a thread also allow two CTAs per SM, this stand-in uses
// fewer) an H100/H200 keeps resident at once, and how many CTAs
// of the same shape without clusters: whether paired-row clusters (docs/PERFORMANCE.md, tried
// and not kept) lose residency. Build: nvcc -O3 -arch=sm_90a -o cluster_occupancy
// gpu/probes/cluster_occupancy.cu
#include <cstdio>

#include <cuda_runtime.h>

__global__ void __launch_bounds__(256, 2) shaped(float* out) {
  extern __shared__ float smem[];
  smem[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (out) out[blockIdx.x] = smem[255 - threadIdx.x];
}

int main() {
  const int smem = 98816;
  cudaFuncSetAttribute(shaped, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  int per_sm = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, shaped, 256, smem);
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  for (int cluster = 1; cluster <= 2; ++cluster) {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(2 * 132);
    config.blockDim = dim3(256);
    config.dynamicSmemBytes = smem;
    cudaLaunchAttribute attribute;
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = cluster;
    attribute.val.clusterDim.y = attribute.val.clusterDim.z = 1;
    config.attrs = &attribute;
    config.numAttrs = 1;
    int clusters = 0;
    const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, shaped, &config);
    printf("%s, %d SMs: %d CTAs per SM without clusters; clusters of %d: %d active (%d CTAs)%s%s\n",
           prop.name, prop.multiProcessorCount, per_sm, cluster, clusters, clusters * cluster,
           e ? " error: " : "", e ? cudaGetErrorString(e) : "");
  }
  return 0;
}
