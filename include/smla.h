/*
 * smla: a JIT-compiling attention runtime for DeepSeek-V4-style sparse attention.
 *
 * The only header a host includes. C99-clean: no CUDA headers are needed; a CUDA stream is passed
 * as `struct CUstream_st*`, which is what both CUstream (driver API) and cudaStream_t (runtime
 * API) are.
 *
 * Every function returns smla_status. Nothing aborts on bad input; smla_last_error() returns a
 * thread-local message naming the offending field and value. See README.md, and the exact math
 * in docs/semantics.md.
 *
 * Threads: any number of threads may call smla_prepare, smla_decode and smla_prefill on one
 * context at once (preparations of a context run one at a time; calls of prepared problems do
 * not wait for them). smla_context_destroy must not overlap another call on the same context.
 * Contexts share nothing but the cache file, which many processes may share too.
 */
#ifndef SMLA_H
#define SMLA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define SMLA_API
#else
#define SMLA_API __attribute__((visibility("default")))
#endif

#define SMLA_VERSION_MAJOR 0
#define SMLA_VERSION_MINOR 5
#define SMLA_VERSION_PATCH 0

/* Head dimension of every query and KV vector: [nope 0..447 | rope 448..511]. */
#define SMLA_HEAD_DIM 512
#define SMLA_MAX_HEADS 128
#define SMLA_MAX_SOURCES 2
#define SMLA_MAX_WIDTH 65536
#define SMLA_MAX_Q_LEN 8

typedef enum smla_status {
  SMLA_OK = 0,
  SMLA_ERR_INVALID_ARGUMENT = 1,
  SMLA_ERR_UNSUPPORTED = 2,
  SMLA_ERR_NO_DEVICE = 3,
  SMLA_ERR_CUDA = 4,
  SMLA_ERR_COMPILE = 5,
  SMLA_ERR_CACHE = 6,
  SMLA_ERR_WORKSPACE = 7,
  /* A kernel is missing and compiling now is forbidden (JIT off, or the stream is capturing). */
  SMLA_ERR_NOT_READY = 8,
  /* Host out of memory or an unexpected internal failure; the message says which. */
  SMLA_ERR_INTERNAL = 9
} smla_status;

typedef enum smla_dtype { SMLA_BF16 = 0, SMLA_FP8_E4M3 = 1 } smla_dtype;

typedef enum smla_kv_layout {
  SMLA_KV_FP8_UNIFORM = 0, /* 512 B/token: 512 e4m3, one per-tensor kv_scale */
  SMLA_KV_FP8_PACKED = 1,  /* 584 B/token: FlashMLA "MODEL1" (e4m3 nope + bf16 rope + ue8m0) */
  SMLA_KV_BF16 = 2         /* 1024 B/token: 512 bf16 */
} smla_kv_layout;

/* Where a row's entries of one source come from. A row's position pos comes from the varlen
 * description (row i of request b, which has n_b rows and kv_lens[b] tokens in all, sits at
 * pos = kv_lens[b] - n_b + i); the structured kinds read a per-request block table instead of a
 * per-row index table: token t of request b is physical index
 * block_table[b][t / page_size] * page_size + t % page_size. */
typedef enum smla_source_kind {
  SMLA_SOURCE_LIST = 0,   /* a per-row index table of `width` columns */
  SMLA_SOURCE_WINDOW = 1, /* tokens max(0, pos - width + 1) .. pos of the row's request */
  SMLA_SOURCE_PREFIX = 2  /* entries 0 .. min(floor((pos + 1) / ratio), width) - 1 */
} smla_source_kind;

typedef enum smla_jit_policy {
  SMLA_JIT_ALLOW = 0, /* compile missing kernels when asked (never while a stream captures) */
  SMLA_JIT_FORBID = 1 /* never compile: a kernel not in memory or cache is SMLA_ERR_NOT_READY */
} smla_jit_policy;

typedef enum smla_log_level {
  SMLA_LOG_ERROR = 0,
  SMLA_LOG_WARN = 1,
  SMLA_LOG_INFO = 2,
  SMLA_LOG_DEBUG = 3
} smla_log_level;

/* Context options. Fill with smla_options_init() and change what you need. A zero-filled struct
 * is valid and means the same defaults, except log_level SMLA_LOG_ERROR.
 * The operator's environment, read once by smla_context_create, overrides them: SMLA_CACHE,
 * SMLA_SYSTEM_CACHE, SMLA_JIT (0: forbid, 1: allow), SMLA_LOG, SMLA_BATCH_VARIANT (0 or 1, as
 * batch_variant); SMLA_TUNING=0 ignores the cache's tuning rows (`smla tune`); SMLA_TILE runs
 * every call on one tile configuration (for measuring; a text that is no tile makes
 * smla_context_create fail with SMLA_ERR_INVALID_ARGUMENT). A value outside these is ignored
 * (with a warning at log level SMLA_LOG_WARN or above). */
typedef struct smla_options {
  int device;                    /* CUDA device ordinal (default 0) */
  /* NULL: default path; "": memory only. A file this user may not write is read-only (its
   * kernels are found, new ones stay in memory); one that cannot be used (damaged, another
   * program's) leaves the context memory-only. Either way with one warning, never a failure. */
  const char* cache_path;
  const char* system_cache_path; /* optional read-only cache consulted first; NULL: none */
  smla_jit_policy jit;           /* default SMLA_JIT_ALLOW */
  smla_log_level log_level;      /* default SMLA_LOG_WARN; messages go to stderr */
  /* Target architecture ("sm_90a", "sm_100a", "sm_103a", "sm_120a", "sm_121a") for a context
   * without a device, so that smla_prepare compiles and caches kernels for it. NULL: the device's
   * architecture. A CUDA driver that is installed but fails (cuInit or counting devices) makes
   * smla_context_create fail with SMLA_ERR_CUDA when this is NULL; with an arch it warns and
   * compiles without a device. No driver, or no device, is not an error. */
  const char* arch;
  /* 0 (default): a row's result is bitwise the same whatever else is in the call (how many rows,
   * which). 1: calls may run kernels whose results differ between call sizes in the last bits
   * (within the tolerance of docs/semantics.md), faster at many rows and at 64 and 128 heads.
   * Wherever the Hopper wgmma kernel runs with fp8 q on the uniform layout and want_lse 0, Q K^T
   * are e4m3 products whose sums the tensor cores keep to about 13 bits: the scores move by up
   * to ~2e-3 of their magnitude, out stays within tolerance (an lse would not, so with want_lse
   * it multiplies in bf16). SMLA_BATCH_VARIANT in the environment overrides it. */
  int batch_variant;
} smla_options;

typedef struct smla_source_desc {
  smla_source_kind kind;
  int page_size; /* tokens (entries) per page, >= 1; a page (smla_min_page_stride) < 2 GiB */
  int width;     /* 1..65536: index-table columns (list), the window (window), the most entries
                    a row may attend (prefix: the compressed cache's capacity) */
  int ratio;     /* prefix: tokens per compressed entry, 1..65536 (HCA: 128); else 0 */
} smla_source_desc;

/* The static description of one layer type in one deployment. */
typedef struct smla_problem {
  int num_heads;      /* heads on this rank, 1..128 */
  smla_dtype q_dtype; /* SMLA_BF16 or SMLA_FP8_E4M3 (per-tensor q_scale) */
  smla_kv_layout kv_layout;
  int q_len;       /* query rows per request: 1, or 2..8 for MTP verify. Each row has
                      its own index lists, so decode computes every row alike and
                      num_rows need not be a multiple of q_len */
  int num_sources; /* 1 or 2 */
  smla_source_desc sources[SMLA_MAX_SOURCES];
  int has_sink; /* 0 or 1 */
  int want_lse; /* 0 or 1 */
} smla_problem;

/* Per-call description of one source. Physical index of a token = page * page_size + offset;
 * page p starts at cache + p * page_stride_bytes. A list source's `indices` is its index table
 * [num_rows][index_row_stride] of physical indices; a window or prefix source's is its block
 * table [num_requests][index_row_stride] of page numbers (columns past a request's needs are
 * never read; a page number outside [0, num_pages) makes its tokens skipped). */
typedef struct smla_source_args {
  const void* cache;         /* device pointer, 16-byte aligned */
  int64_t page_stride_bytes; /* multiple of 16, at least the layout's page bytes */
  int64_t num_pages;         /* >= 0; indices >= num_pages * page_size are skipped */
  const int32_t* indices;    /* device pointer: index table (list) or block table (structured) */
  int64_t index_row_stride;  /* elements: >= width (list); >= the pages a request spans */
  const int32_t* lengths;    /* list only: [num_rows] valid columns per row, or NULL (= width);
                                structured sources take their lengths from the positions: NULL */
} smla_source_args;

typedef struct smla_args {
  int num_rows;          /* >= 0; 0 is a no-op */
  const void* q;         /* [num_rows][num_heads][512] of q_dtype, 16-byte aligned */
  int64_t q_row_stride;  /* elements */
  int64_t q_head_stride; /* elements */
  float q_scale;         /* fp8 q only: dequantized q = e4m3 * q_scale */
  smla_source_args sources[SMLA_MAX_SOURCES];
  float kv_scale;    /* SMLA_KV_FP8_UNIFORM only */
  const float* sink; /* [num_heads] fp32, device pointer; required iff has_sink */
  float softmax_scale;
  void* out;              /* [num_rows][num_heads][512] bf16, 16-byte aligned; out and lse
                             must not overlap each other or any array the call reads */
  int64_t out_row_stride; /* elements */
  int64_t out_head_stride;
  float* lse; /* [num_rows][num_heads] fp32 (natural log, no sink); iff want_lse */
} smla_args;

/* Varlen description: the call's rows are the new tokens of num_requests requests, consecutive
 * per request. The host arrays are validated on every call (and, in prefill, are what a call's
 * launch may depend on); kernels read the device copies, which must hold the same values. A
 * call captured in a CUDA graph keeps num_requests and the host arrays of its capture; on
 * replay the device arrays and the block tables may hold new values (decode: the requests'
 * new lengths), which the kernels read then: out-of-range values only ever skip entries. */
typedef struct smla_varlen {
  int num_requests;
  const int32_t* cu_seqlens_q; /* [num_requests + 1] host: row offsets, 0 .. num_rows */
  const int32_t* kv_lens;      /* [num_requests] host: tokens of each request, its new rows
                                  included (>= its rows) */
  /* Device copies of the two arrays, 4-byte aligned; required when a source is a window or a
   * prefix (list sources read no positions), else may be NULL. */
  const int32_t* device_cu_seqlens_q;
  const int32_t* device_kv_lens;
} smla_varlen;

/* Bytes of one token in each layout, and the smallest page stride a page of page_size tokens
 * needs (packed pages are padded to a multiple of 576 bytes). */
#define SMLA_UNIFORM_TOKEN_BYTES 512
#define SMLA_PACKED_TOKEN_BYTES 584
#define SMLA_PACKED_DATA_BYTES 576 /* per token: 448 e4m3 nope + 64 bf16 rope */
#define SMLA_BF16_TOKEN_BYTES 1024

static inline int64_t smla_min_page_stride(smla_kv_layout layout, int64_t page_size) {
  switch (layout) {
    case SMLA_KV_FP8_UNIFORM:
      return page_size * SMLA_UNIFORM_TOKEN_BYTES;
    case SMLA_KV_FP8_PACKED:
      return (page_size * SMLA_PACKED_TOKEN_BYTES + SMLA_PACKED_DATA_BYTES - 1) /
             SMLA_PACKED_DATA_BYTES * SMLA_PACKED_DATA_BYTES;
    case SMLA_KV_BF16:
      return page_size * SMLA_BF16_TOKEN_BYTES;
  }
  return -1;
}

typedef struct smla_context smla_context;
struct CUstream_st;

SMLA_API void smla_options_init(smla_options* options);
SMLA_API smla_status smla_context_create(const smla_options* options, smla_context** ctx);
SMLA_API smla_status smla_context_destroy(smla_context* ctx);

/* Makes every kernel this problem can dispatch to for up to max_rows rows ready and returns the
 * workspace (device bytes) the caller must pass to decode/prefill. After it returns SMLA_OK,
 * decode/prefill with num_rows <= max_rows never compile, allocate or synchronize. On a device,
 * the cache's tuning rows for this GPU (`smla tune`) are loaded here; they never change the
 * workspace size, a pure function of (problem, the context's arch, mode, max_rows). A kernel
 * may keep local memory (a stack frame; up to 512 bytes a thread): where the context's
 * per-thread stack limit (CU_LIMIT_STACK_SIZE, 1 KiB by default) is lower, prepare raises it to
 * what the kernel needs, so that the driver's stack reservation grows here and not at a launch.
 * The limit is the process's, for every user of the device's primary context, and stays raised;
 * raising it may wait for work on the device and can fail (SMLA_ERR_CUDA). */
SMLA_API smla_status smla_prepare(smla_context* ctx, const smla_problem* problem, int max_rows,
                                  size_t* workspace_bytes);

/* The workspace needs no initialization. A split call's combine kernel may load bytes of it that
 * no kernel of the call wrote (the values of a row's empty segments or items) and discard them, so
 * compute-sanitizer --tool initcheck can report loads from a fresh workspace. The bytes a call
 * writes there must not overlap q, out, lse, sink or a source's cache, indices or lengths
 * (SMLA_ERR_INVALID_ARGUMENT). A split call launches two kernels; when the second launch fails
 * (SMLA_ERR_CUDA), the first may still be running on the stream, reading the inputs and writing
 * the workspace: synchronize the stream before freeing or reusing them. */
/* `varlen` may be NULL when every source is a list (a row's lists say everything); with a
 * window or prefix source it gives the rows' requests and positions. */
SMLA_API smla_status smla_decode(smla_context* ctx, const smla_problem* problem,
                                 const smla_args* args, const smla_varlen* varlen, void* workspace,
                                 size_t workspace_bytes, struct CUstream_st* stream);

/* As smla_decode, for the new tokens of requests (varlen required). */
SMLA_API smla_status smla_prefill(smla_context* ctx, const smla_problem* problem,
                                  const smla_args* args, const smla_varlen* varlen, void* workspace,
                                  size_t workspace_bytes, struct CUstream_st* stream);

SMLA_API const char* smla_version(void);
SMLA_API const char* smla_status_string(smla_status status);
/* Thread-local message of the last failing call on this thread ("" if none). */
SMLA_API const char* smla_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* SMLA_H */
