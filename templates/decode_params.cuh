// The launch parameters of the decode and combine kernels. Plain C++ with fixed-width members so
// that the host (g++, LP64) and the device (NVRTC) agree on the layout; runtime fills it
// (codegen/launch_params.h).
#pragma once

namespace smla {

struct SourceParams {
  const unsigned char* cache;
  long long page_stride_bytes;
  long long index_limit;        // num_pages * page_size: indices in [0, limit) are valid
  const int* indices;           // index table (list) or block table (window, prefix)
  long long index_row_stride;   // elements
  const int* lengths;           // list: [num_rows] or null
};

struct DecodeParams {
  int num_rows;
  int split;            // 1: rows cut into items (work_item), partials out
  int prefix_segments;  // split: the segments of a row's first item (1: one)
  int folds;            // 1: CTAs fold the segments they walk (whole rows; prefix items)
  const void* q;
  long long q_row_stride;       // elements
  long long q_head_stride;
  float score_scale_log2;       // softmax_scale * log2(e) [* q_scale] [* kv_scale]
  float out_scale;              // kv_scale for the uniform layout, else 1
  int num_requests;             // the varlen description, or 0 (list sources only)
  const int* cu_seqlens_q;      // [num_requests + 1] row offsets, or null
  const int* kv_lens;           // [num_requests] tokens per request, or null
  SourceParams sources[2];
  const float* sink;            // [num_heads] or null
  void* out;                    // bf16
  long long out_row_stride;     // elements
  long long out_head_stride;
  float* lse;                   // [num_rows][num_heads] or null
  float* partial_out;           // split: [item][heads_per_cta][512] fp32
  float* partial_ml;            // split: [item][heads_per_cta][2] (max in log2 units, sum)
};

}  // namespace smla
