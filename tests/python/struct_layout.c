/* Prints "struct field offset size" for every field of the public structs and "struct - sizeof"
 * for each struct, as the C compiler lays them out: test_struct_layout.py compares the Python
 * package's ctypes structs with it. */
#include <smla.h>
#include <stddef.h>
#include <stdio.h>

#define FIELD(s, f) printf("%s %s %zu %zu\n", #s, #f, offsetof(s, f), sizeof(((s*)0)->f))
#define SIZE(s) printf("%s - %zu\n", #s, sizeof(s))

int main(void) {
  FIELD(smla_options, device);
  FIELD(smla_options, cache_path);
  FIELD(smla_options, system_cache_path);
  FIELD(smla_options, jit);
  FIELD(smla_options, log_level);
  FIELD(smla_options, arch);
  FIELD(smla_options, batch_variant);
  SIZE(smla_options);
  FIELD(smla_source_desc, kind);
  FIELD(smla_source_desc, page_size);
  FIELD(smla_source_desc, width);
  FIELD(smla_source_desc, ratio);
  SIZE(smla_source_desc);
  FIELD(smla_problem, num_heads);
  FIELD(smla_problem, q_dtype);
  FIELD(smla_problem, kv_layout);
  FIELD(smla_problem, q_len);
  FIELD(smla_problem, num_sources);
  FIELD(smla_problem, sources);
  FIELD(smla_problem, has_sink);
  FIELD(smla_problem, want_lse);
  SIZE(smla_problem);
  FIELD(smla_source_args, cache);
  FIELD(smla_source_args, page_stride_bytes);
  FIELD(smla_source_args, num_pages);
  FIELD(smla_source_args, indices);
  FIELD(smla_source_args, index_row_stride);
  FIELD(smla_source_args, lengths);
  SIZE(smla_source_args);
  FIELD(smla_args, num_rows);
  FIELD(smla_args, q);
  FIELD(smla_args, q_row_stride);
  FIELD(smla_args, q_head_stride);
  FIELD(smla_args, q_scale);
  FIELD(smla_args, sources);
  FIELD(smla_args, kv_scale);
  FIELD(smla_args, sink);
  FIELD(smla_args, softmax_scale);
  FIELD(smla_args, out);
  FIELD(smla_args, out_row_stride);
  FIELD(smla_args, out_head_stride);
  FIELD(smla_args, lse);
  SIZE(smla_args);
  FIELD(smla_varlen, num_requests);
  FIELD(smla_varlen, cu_seqlens_q);
  FIELD(smla_varlen, kv_lens);
  FIELD(smla_varlen, device_cu_seqlens_q);
  FIELD(smla_varlen, device_kv_lens);
  SIZE(smla_varlen);
  /* Enumerators the package spells out, as "enum NAME value". */
  printf("enum SMLA_ERR_INTERNAL %d\n", SMLA_ERR_INTERNAL);
  printf("enum SMLA_ERR_NOT_READY %d\n", SMLA_ERR_NOT_READY);
  printf("enum SMLA_KV_BF16 %d\n", SMLA_KV_BF16);
  printf("enum SMLA_FP8_E4M3 %d\n", SMLA_FP8_E4M3);
  printf("enum SMLA_LOG_DEBUG %d\n", SMLA_LOG_DEBUG);
  printf("enum SMLA_MAX_SOURCES %d\n", SMLA_MAX_SOURCES);
  printf("enum SMLA_PACKED_TOKEN_BYTES %d\n", SMLA_PACKED_TOKEN_BYTES);
  printf("enum min_page_stride_packed_64 %lld\n",
         (long long)smla_min_page_stride(SMLA_KV_FP8_PACKED, 64));
  return 0;
}
