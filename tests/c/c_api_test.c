/*
 * The C API driven from C99: each kind of bad argument returns the documented status and leaves
 * a message in smla_last_error() that names the field. Valid calls either do nothing (no rows)
 * or stop before any launch (no device, or no kernel while JIT is forbidden).
 *
 * Device pointers are fake aligned addresses: validation never dereferences them. Prints one
 * line per check and exits nonzero if any check failed.
 */
#include <math.h>
#include <smla.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int g_checks;
static int g_failures;

static void report(int ok, const char* what, const char* detail) {
  ++g_checks;
  if (!ok) ++g_failures;
  printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", what, detail[0] ? ": " : "", detail);
}

/* `status` must be `expected`, and the last error must be non-empty and mention `field`. */
static void expect_error(const char* what, smla_status status, smla_status expected,
                         const char* field) {
  const char* message = smla_last_error();
  char detail[512];
  int ok =
      status == expected && message != NULL && message[0] != '\0' && strstr(message, field) != NULL;
  snprintf(detail, sizeof detail, "%s (want %s mentioning \"%s\"): \"%s\"",
           smla_status_string(status), smla_status_string(expected), field,
           message ? message : "(NULL)");
  report(ok, what, detail);
}

static void expect_invalid(const char* what, smla_status status, const char* field) {
  expect_error(what, status, SMLA_ERR_INVALID_ARGUMENT, field);
}

/* Buffers 4 GiB apart, 256-byte aligned, plus `misalign` bytes. */
static void* fake(unsigned buffer, unsigned misalign) {
  return (void*)(uintptr_t)(0x7f0000000000ull + ((uint64_t)buffer << 32) + misalign);
}

typedef struct call {
  smla_problem problem;
  smla_args args;
} call;

/* 16 heads, bf16 q, packed fp8 KV, window (page 256, width 128) + top-k (page 64, width 512),
 * sink and lse; contiguous q and out, minimal page strides. */
static call valid_call(int num_rows) {
  call c;
  int s;
  memset(&c, 0, sizeof c);
  c.problem.num_heads = 16;
  c.problem.q_dtype = SMLA_BF16;
  c.problem.kv_layout = SMLA_KV_FP8_PACKED;
  c.problem.q_len = 1;
  c.problem.num_sources = 2;
  c.problem.sources[0].kind = SMLA_SOURCE_LIST;
  c.problem.sources[0].page_size = 256;
  c.problem.sources[0].width = 128;
  c.problem.sources[1].kind = SMLA_SOURCE_LIST;
  c.problem.sources[1].page_size = 64;
  c.problem.sources[1].width = 512;
  c.problem.has_sink = 1;
  c.problem.want_lse = 1;

  c.args.num_rows = num_rows;
  c.args.q = fake(0, 0);
  c.args.q_row_stride = 16 * SMLA_HEAD_DIM;
  c.args.q_head_stride = SMLA_HEAD_DIM;
  c.args.q_scale = 1.0f;
  for (s = 0; s < 2; ++s) {
    smla_source_args* source = &c.args.sources[s];
    source->cache = fake(1 + 3 * s, 0);
    source->page_stride_bytes =
        smla_min_page_stride(c.problem.kv_layout, c.problem.sources[s].page_size);
    source->num_pages = 1000;
    source->indices = fake(2 + 3 * s, 0);
    source->index_row_stride = c.problem.sources[s].width;
    source->lengths = fake(3 + 3 * s, 0);
  }
  c.args.kv_scale = 1.0f;
  c.args.sink = fake(7, 0);
  c.args.softmax_scale = 0.044194173f; /* 1/sqrt(512) */
  c.args.out = fake(8, 0);
  c.args.out_row_stride = 16 * SMLA_HEAD_DIM;
  c.args.out_head_stride = SMLA_HEAD_DIM;
  c.args.lse = fake(9, 0);
  return c;
}

static smla_status decode(smla_context* ctx, const call* c) {
  return smla_decode(ctx, &c->problem, &c->args, NULL, NULL, 0, NULL);
}

static void check_problem_errors(smla_context* ctx) {
  call c = valid_call(4);
  expect_invalid("decode: NULL problem", smla_decode(ctx, NULL, &c.args, NULL, NULL, 0, NULL),
                 "problem");
  c.problem.num_heads = 0;
  expect_invalid("decode: 0 heads", decode(ctx, &c), "num_heads");
  c.problem.num_heads = 129;
  expect_invalid("decode: 129 heads", decode(ctx, &c), "num_heads");
  c = valid_call(4);
  c.problem.q_dtype = (smla_dtype)5;
  expect_invalid("decode: unknown q dtype", decode(ctx, &c), "q_dtype");
  c = valid_call(4);
  c.problem.q_len = 9;
  expect_invalid("decode: q_len 9", decode(ctx, &c), "q_len");
  c = valid_call(4);
  c.problem.num_sources = 3;
  expect_invalid("decode: 3 sources", decode(ctx, &c), "num_sources");
  c = valid_call(4);
  c.problem.sources[1].width = 65537;
  expect_invalid("decode: width 65537", decode(ctx, &c), "sources[1].width");
  c = valid_call(4);
  c.problem.sources[0].page_size = 0;
  expect_invalid("decode: page size 0", decode(ctx, &c), "sources[0].page_size");
  c = valid_call(4);
  c.problem.has_sink = 2;
  expect_invalid("decode: has_sink 2", decode(ctx, &c), "has_sink");
  c = valid_call(4);
  c.problem.sources[1].kind = SMLA_SOURCE_WINDOW;
  expect_invalid("decode: window without varlen", decode(ctx, &c), "varlen = NULL");
  c.problem.num_heads = 0;
  expect_invalid("decode: window and 0 heads", decode(ctx, &c), "num_heads");
}

static void check_args_errors(smla_context* ctx) {
  call c = valid_call(4);
  expect_invalid("decode: NULL args", smla_decode(ctx, &c.problem, NULL, NULL, NULL, 0, NULL),
                 "args");
  c.args.num_rows = -1;
  expect_invalid("decode: -1 rows", decode(ctx, &c), "num_rows");
  c = valid_call(4);
  c.args.q = NULL;
  expect_invalid("decode: NULL q", decode(ctx, &c), "args.q");
  c.args.q = fake(0, 8);
  expect_invalid("decode: misaligned q", decode(ctx, &c), "args.q");
  c = valid_call(4);
  c.args.q_head_stride = 516;
  expect_invalid("decode: misaligned q head stride", decode(ctx, &c), "args.q_head_stride");
  c = valid_call(4);
  c.args.out_head_stride = 256;
  expect_invalid("decode: overlapping out heads", decode(ctx, &c), "args.out_head_stride");
  c = valid_call(4);
  c.args.out_row_stride = 512;
  expect_invalid("decode: overlapping out rows", decode(ctx, &c), "args.out_");
  c = valid_call(4);
  c.args.q_row_stride = INT64_MAX / 2 - 7;
  expect_invalid("decode: q stride overflows int64", decode(ctx, &c), "args.q_row_stride");
  c = valid_call(4);
  c.args.softmax_scale = NAN;
  expect_invalid("decode: NaN softmax scale", decode(ctx, &c), "softmax_scale");
  c.args.softmax_scale = 0.0f;
  expect_invalid("decode: zero softmax scale", decode(ctx, &c), "softmax_scale");
  c = valid_call(4);
  c.problem.q_dtype = SMLA_FP8_E4M3;
  c.args.q_scale = -1.0f;
  expect_invalid("decode: negative fp8 q scale", decode(ctx, &c), "q_scale");
  c = valid_call(4);
  c.problem.kv_layout = SMLA_KV_FP8_UNIFORM;
  c.args.sources[0].page_stride_bytes = 256 * SMLA_UNIFORM_TOKEN_BYTES;
  c.args.sources[1].page_stride_bytes = 64 * SMLA_UNIFORM_TOKEN_BYTES;
  c.args.kv_scale = INFINITY;
  expect_invalid("decode: infinite kv scale", decode(ctx, &c), "kv_scale");
  c = valid_call(4);
  c.args.sink = NULL;
  expect_invalid("decode: NULL sink with has_sink", decode(ctx, &c), "args.sink");
  c = valid_call(4);
  c.args.lse = NULL;
  expect_invalid("decode: NULL lse with want_lse", decode(ctx, &c), "args.lse");
}

static void check_source_and_workspace_errors(smla_context* ctx) {
  call c = valid_call(4);
  c.args.sources[1].page_stride_bytes = 37440 - 16; /* 64 packed tokens need 37440 */
  expect_invalid("decode: page stride too small", decode(ctx, &c), "sources[1].page_stride_bytes");
  c = valid_call(4);
  c.args.sources[0].page_stride_bytes += 8;
  expect_invalid("decode: page stride not 16-aligned", decode(ctx, &c),
                 "sources[0].page_stride_bytes");
  c = valid_call(4);
  c.args.sources[0].cache = NULL;
  expect_invalid("decode: NULL cache", decode(ctx, &c), "sources[0].cache");
  c = valid_call(4);
  c.args.sources[1].num_pages = INT64_MAX / 1000;
  expect_invalid("decode: num_pages overflows int64", decode(ctx, &c), "sources[1].num_pages");
  c = valid_call(4);
  c.args.sources[1].indices = NULL;
  expect_invalid("decode: NULL indices", decode(ctx, &c), "sources[1].indices");
  c = valid_call(4);
  c.args.sources[0].index_row_stride = 127;
  expect_invalid("decode: index row stride < width", decode(ctx, &c),
                 "sources[0].index_row_stride");
  c = valid_call(4);
  expect_invalid("decode: misaligned workspace",
                 smla_decode(ctx, &c.problem, &c.args, NULL, fake(10, 8), 4096, NULL), "workspace");
  expect_invalid("decode: NULL workspace with bytes",
                 smla_decode(ctx, &c.problem, &c.args, NULL, NULL, 4096, NULL), "workspace");
  expect_invalid("decode: NULL context", decode(NULL, &c), "ctx");
}

static void check_prefill(smla_context* ctx) {
  const int32_t cu_seqlens_q[3] = {0, 1, 4};
  const int32_t kv_lens[2] = {1, 4};
  const int32_t bad_cu_seqlens_q[3] = {0, 3, 2};
  smla_varlen varlen;
  call c = valid_call(4);
  varlen.num_requests = 2;
  varlen.cu_seqlens_q = cu_seqlens_q;
  varlen.kv_lens = kv_lens;
  expect_invalid("prefill: NULL varlen",
                 smla_prefill(ctx, &c.problem, &c.args, NULL, NULL, 0, NULL), "varlen");
  varlen.cu_seqlens_q = bad_cu_seqlens_q;
  expect_invalid("prefill: decreasing cu_seqlens_q",
                 smla_prefill(ctx, &c.problem, &c.args, &varlen, NULL, 0, NULL), "cu_seqlens_q");
  varlen.cu_seqlens_q = cu_seqlens_q;
  varlen.num_requests = 0;
  expect_invalid("prefill: no requests",
                 smla_prefill(ctx, &c.problem, &c.args, &varlen, NULL, 0, NULL), "num_requests");
  c = valid_call(0);
  report(smla_prefill(ctx, &c.problem, &c.args, &varlen, NULL, 0, NULL) == SMLA_OK,
         "prefill: 0 rows is SMLA_OK", "");
}

static void check_prepare(smla_context* ctx) {
  call c = valid_call(4);
  size_t bytes = 0;
  expect_invalid("prepare: max_rows 0", smla_prepare(ctx, &c.problem, 0, &bytes), "max_rows");
  expect_invalid("prepare: max_rows -1", smla_prepare(ctx, &c.problem, -1, &bytes), "max_rows");
  expect_invalid("prepare: max_rows 2^31-1", smla_prepare(ctx, &c.problem, INT32_MAX, &bytes),
                 "max_rows");
  expect_invalid("prepare: NULL problem", smla_prepare(ctx, NULL, 8, &bytes), "problem");
  expect_invalid("prepare: NULL workspace_bytes", smla_prepare(ctx, &c.problem, 8, NULL),
                 "workspace_bytes");
  c.problem.sources[0].kind = SMLA_SOURCE_PREFIX;
  expect_invalid("prepare: prefix without ratio", smla_prepare(ctx, &c.problem, 8, &bytes),
                 "sources[0].ratio");
}

static void check_valid_calls(smla_context* ctx) {
  call c = valid_call(0);
  smla_context* no_compile = NULL;
  smla_options options;
  smla_status status;
  char detail[512];
  report(decode(ctx, &c) == SMLA_OK, "decode: 0 rows is SMLA_OK", "");
  memset(&c.args, 0, sizeof c.args); /* nothing is read without rows */
  report(decode(ctx, &c) == SMLA_OK, "decode: 0 rows with NULL pointers is SMLA_OK", "");

  /* With JIT forbidden and a memory-only cache no kernel exists, so even with a GPU nothing can
   * launch on these fake pointers: without one the call is SMLA_ERR_NO_DEVICE. */
  smla_options_init(&options);
  options.cache_path = "";
  options.jit = SMLA_JIT_FORBID;
  if (smla_context_create(&options, &no_compile) != SMLA_OK) {
    report(0, "context: create memory-only, JIT forbidden", smla_last_error());
    return;
  }
  c = valid_call(4);
  status = decode(no_compile, &c);
  snprintf(detail, sizeof detail, "%s: \"%s\"", smla_status_string(status),
           status == SMLA_OK ? "" : smla_last_error());
  report(
      status == SMLA_ERR_NO_DEVICE || status == SMLA_ERR_NOT_READY || status == SMLA_ERR_WORKSPACE,
      "decode: valid 4-row call passes validation and stops before launching", detail);
  smla_context_destroy(no_compile);
}

static void check_context_and_strings(void) {
  smla_options options;
  smla_context* ctx = NULL;
  char version[64];
  int i, j, distinct = 1, named = 1;
  smla_options_init(&options);
  report(options.device == 0 && options.cache_path == NULL && options.system_cache_path == NULL &&
             options.jit == SMLA_JIT_ALLOW && options.log_level == SMLA_LOG_WARN &&
             options.arch == NULL && options.batch_variant == 0,
         "options: smla_options_init gives the documented defaults", "");
  options.device = -1;
  expect_invalid("context: device -1", smla_context_create(&options, &ctx), "options.device");
  smla_options_init(&options);
  options.batch_variant = 2;
  expect_invalid("context: batch_variant 2", smla_context_create(&options, &ctx),
                 "options.batch_variant");
  smla_options_init(&options);
  options.arch = "sm_80";
  expect_invalid("context: arch sm_80", smla_context_create(&options, &ctx), "options.arch");
  expect_invalid("context: NULL out pointer", smla_context_create(NULL, NULL), "ctx");
  report(smla_context_destroy(NULL) == SMLA_OK, "context: destroy(NULL) is SMLA_OK", "");

  for (i = SMLA_OK; i <= SMLA_ERR_INTERNAL; ++i) {
    const char* name = smla_status_string((smla_status)i);
    named = named && name != NULL && name[0] != '\0';
    for (j = SMLA_OK; named && j < i; ++j) {
      distinct = distinct && strcmp(name, smla_status_string((smla_status)j)) != 0;
    }
  }
  report(named, "status strings: every status has a non-empty string", "");
  report(distinct, "status strings: all distinct", "");
  report(smla_status_string((smla_status)99) != NULL, "status strings: unknown code not NULL", "");

  snprintf(version, sizeof version, "%d.%d.%d", SMLA_VERSION_MAJOR, SMLA_VERSION_MINOR,
           SMLA_VERSION_PATCH);
  report(smla_version() != NULL && strstr(smla_version(), version) != NULL,
         "version: mentions the header's version", smla_version() ? smla_version() : "(NULL)");
}

int main(void) {
  smla_context* ctx = NULL;
  smla_status status;
  check_context_and_strings();
  status = smla_context_create(NULL, &ctx);
  report(status == SMLA_OK && ctx != NULL, "context: create with NULL options (no GPU needed)",
         status == SMLA_OK ? "" : smla_last_error());
  if (status != SMLA_OK) return 1;
  check_problem_errors(ctx);
  check_args_errors(ctx);
  check_source_and_workspace_errors(ctx);
  check_prefill(ctx);
  check_prepare(ctx);
  check_valid_calls(ctx);
  report(smla_context_destroy(ctx) == SMLA_OK, "context: destroy", "");
  printf("%d checks, %d failed\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
