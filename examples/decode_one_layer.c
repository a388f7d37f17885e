/* One DeepSeek-V4-Pro layer at tensor-parallel degree 8 (16 heads, a CSA layer: a window of 128
 * tokens in pages of 256 plus the top-1024 compressed entries in pages of 64, packed FP8 cache,
 * bf16 q, attention sink) through smla's C API: create a context, prepare the problem, and on a
 * GPU decode 64 rows of random data, check that every output is finite and not all zero, and
 * time the call. Without a GPU it prepares for sm_90a (compiling or loading the kernels) and
 * stops there. A host author's starting point: the CUDA runtime here only allocates and times.
 */
#include <cuda_runtime.h>
#include <smla.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kHeads = 16, kRows = 64, kWindow = 128, kTopk = 1024, kWindowPage = 256, kTopkPage = 64 };

static int fail(const char* what, smla_status status) {
  fprintf(stderr, "%s: %s: %s\n", what, smla_status_string(status), smla_last_error());
  return 1;
}

static int cuda_fail(const char* what, cudaError_t error) {
  fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(error));
  return 1;
}

#define CUDA_TRY(call)                                  \
  do {                                                  \
    cudaError_t e_ = (call);                            \
    if (e_ != cudaSuccess) return cuda_fail(#call, e_); \
  } while (0)

static uint16_t bf16_of(float value) { /* truncation: fine for random inputs */
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  return (uint16_t)(bits >> 16);
}

static float float_of_bf16(uint16_t value) {
  const uint32_t bits = (uint32_t)value << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* A device buffer of `bytes` random bytes drawn by `fill` (NULL: zeros). */
static int upload(void** device, size_t bytes, void (*fill)(unsigned char*, size_t)) {
  unsigned char* host = (unsigned char*)calloc(bytes, 1);
  if (host == NULL) return 1;
  if (fill) fill(host, bytes);
  cudaError_t e = cudaMalloc(device, bytes);
  if (e == cudaSuccess) e = cudaMemcpy(*device, host, bytes, cudaMemcpyHostToDevice);
  free(host);
  return e == cudaSuccess ? 0 : cuda_fail("upload", e);
}

/* e4m3 bytes of magnitude below 1 with either sign, bf16 rope values in [-1, 1), scale bytes
 * near 2^0: a valid packed page. */
static void fill_packed_pages(unsigned char* p, size_t bytes) {
  size_t i;
  for (i = 0; i < bytes; ++i)
    p[i] = (unsigned char)(rand() % 0x38) | (unsigned char)(rand() & 0x80);
}
static void fill_scales_near_one(unsigned char* p, size_t bytes) {
  size_t i;
  for (i = 0; i < bytes; ++i) p[i] = (unsigned char)(124 + rand() % 6);
}
static void fill_q(unsigned char* p, size_t bytes) {
  size_t i;
  for (i = 0; i + 1 < bytes; i += 2) {
    const uint16_t v = bf16_of((float)rand() / RAND_MAX * 2.0f - 1.0f);
    memcpy(p + i, &v, 2);
  }
}

int main(void) {
  smla_problem problem;
  memset(&problem, 0, sizeof problem);
  problem.num_heads = kHeads;
  problem.q_dtype = SMLA_BF16;
  problem.kv_layout = SMLA_KV_FP8_PACKED;
  problem.q_len = 1;
  problem.num_sources = 2;
  problem.sources[0].kind = SMLA_SOURCE_LIST;
  problem.sources[0].page_size = kWindowPage;
  problem.sources[0].width = kWindow;
  problem.sources[1].kind = SMLA_SOURCE_LIST;
  problem.sources[1].page_size = kTopkPage;
  problem.sources[1].width = kTopk;
  problem.has_sink = 1;

  int devices = 0;
  const int have_gpu = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
  smla_options options;
  smla_options_init(&options);
  if (!have_gpu) options.arch = "sm_90a"; /* compile for Hopper without a device */
  smla_context* ctx = NULL;
  smla_status status = smla_context_create(&options, &ctx);
  if (status != SMLA_OK) return fail("smla_context_create", status);
  size_t workspace_bytes = 0;
  status = smla_prepare(ctx, &problem, kRows, &workspace_bytes);
  if (status != SMLA_OK) return fail("smla_prepare", status);
  printf("%s, prepared: %zu bytes of workspace for %d rows\n", smla_version(), workspace_bytes,
         kRows);
  if (!have_gpu) {
    printf("no GPU: kernels prepared for sm_90a, nothing run\n");
    return smla_context_destroy(ctx) == SMLA_OK ? 0 : 1;
  }

  /* Caches of 64 pages each, every row's window in page 0 and its top-k spread over the pool. */
  const int64_t window_pages = 64, topk_pages = 64;
  const int64_t window_stride = smla_min_page_stride(SMLA_KV_FP8_PACKED, kWindowPage);
  const int64_t topk_stride = smla_min_page_stride(SMLA_KV_FP8_PACKED, kTopkPage);
  void *window = NULL, *topk = NULL, *q = NULL, *out = NULL, *sink = NULL, *workspace = NULL;
  void *window_indices = NULL, *topk_indices = NULL;
  if (upload(&window, (size_t)(window_pages * window_stride), fill_packed_pages)) return 1;
  if (upload(&topk, (size_t)(topk_pages * topk_stride), fill_packed_pages)) return 1;
  /* Scale bytes (after each page's 576-byte records) near 2^0 keep the values small. */
  {
    unsigned char* scales = (unsigned char*)malloc((size_t)kWindowPage * 8);
    int64_t page;
    fill_scales_near_one(scales, (size_t)kWindowPage * 8);
    for (page = 0; page < window_pages; ++page) {
      CUDA_TRY(cudaMemcpy((char*)window + page * window_stride + kWindowPage * 576, scales,
                          (size_t)kWindowPage * 8, cudaMemcpyHostToDevice));
    }
    for (page = 0; page < topk_pages; ++page) {
      CUDA_TRY(cudaMemcpy((char*)topk + page * topk_stride + kTopkPage * 576, scales,
                          (size_t)kTopkPage * 8, cudaMemcpyHostToDevice));
    }
    free(scales);
  }
  if (upload(&q, (size_t)kRows * kHeads * 512 * 2, fill_q)) return 1;
  if (upload(&out, (size_t)kRows * kHeads * 512 * 2, NULL)) return 1;
  if (upload(&sink, kHeads * sizeof(float), NULL)) return 1;
  if (workspace_bytes > 0 && upload(&workspace, workspace_bytes, NULL)) return 1;
  {
    int32_t* w = (int32_t*)malloc(sizeof(int32_t) * kRows * kWindow);
    int32_t* t = (int32_t*)malloc(sizeof(int32_t) * kRows * kTopk);
    int r, c;
    for (r = 0; r < kRows; ++r) {
      for (c = 0; c < kWindow; ++c) w[r * kWindow + c] = c;
      for (c = 0; c < kTopk; ++c) t[r * kTopk + c] = rand() % (int)(topk_pages * kTopkPage);
    }
    CUDA_TRY(cudaMalloc(&window_indices, sizeof(int32_t) * kRows * kWindow));
    CUDA_TRY(cudaMalloc(&topk_indices, sizeof(int32_t) * kRows * kTopk));
    CUDA_TRY(
        cudaMemcpy(window_indices, w, sizeof(int32_t) * kRows * kWindow, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(topk_indices, t, sizeof(int32_t) * kRows * kTopk, cudaMemcpyHostToDevice));
    free(w);
    free(t);
  }

  smla_args args;
  memset(&args, 0, sizeof args);
  args.num_rows = kRows;
  args.q = q;
  args.q_row_stride = kHeads * 512;
  args.q_head_stride = 512;
  args.sources[0].cache = window;
  args.sources[0].page_stride_bytes = window_stride;
  args.sources[0].num_pages = window_pages;
  args.sources[0].indices = (const int32_t*)window_indices;
  args.sources[0].index_row_stride = kWindow;
  args.sources[1].cache = topk;
  args.sources[1].page_stride_bytes = topk_stride;
  args.sources[1].num_pages = topk_pages;
  args.sources[1].indices = (const int32_t*)topk_indices;
  args.sources[1].index_row_stride = kTopk;
  args.sink = (const float*)sink;
  args.softmax_scale = 0.044194174f; /* 1 / sqrt(512) */
  args.out = out;
  args.out_row_stride = kHeads * 512;
  args.out_head_stride = 512;

  cudaStream_t stream;
  cudaEvent_t start, stop;
  CUDA_TRY(cudaStreamCreate(&stream));
  CUDA_TRY(cudaEventCreate(&start));
  CUDA_TRY(cudaEventCreate(&stop));
  status =
      smla_decode(ctx, &problem, &args, NULL, workspace, workspace_bytes, stream); /* warm-up */
  if (status != SMLA_OK) return fail("smla_decode", status);
  CUDA_TRY(cudaEventRecord(start, stream));
  for (int i = 0; i < 20; ++i) {
    status = smla_decode(ctx, &problem, &args, NULL, workspace, workspace_bytes, stream);
    if (status != SMLA_OK) return fail("smla_decode", status);
  }
  CUDA_TRY(cudaEventRecord(stop, stream));
  CUDA_TRY(cudaStreamSynchronize(stream));
  float ms = 0.0f;
  CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));

  const size_t count = (size_t)kRows * kHeads * 512;
  uint16_t* host = (uint16_t*)malloc(count * 2);
  CUDA_TRY(cudaMemcpy(host, out, count * 2, cudaMemcpyDeviceToHost));
  size_t finite = 0, nonzero = 0, i;
  for (i = 0; i < count; ++i) {
    const float v = float_of_bf16(host[i]);
    finite += v == v && v - v == 0.0f;
    nonzero += v != 0.0f;
  }
  free(host);
  printf("%d rows of %d heads: %.2f us a call; %zu of %zu outputs finite, %zu nonzero\n", kRows,
         kHeads, 1e3f * ms / 20, finite, count, nonzero);
  smla_context_destroy(ctx);
  return finite == count && nonzero > count / 2 ? 0 : 1;
}
