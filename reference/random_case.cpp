#include "reference/random_case.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "reference/codecs.h"
#include "reference/random_tables.h"
#include "reference/rng.h"

namespace smla::ref {
namespace {

constexpr int kDim = SMLA_HEAD_DIM;
constexpr int kTileDims = 64;  // packed scale tiles; the rope's 64 dims get a factor of their own
constexpr double kPaddedStrideChance = 0.25;

// Normal values with a per-token magnitude and a per-64-dim tile magnitude (both log-uniform),
// so that packed tiles get different scales and the softmax is neither flat nor one-hot.
void random_token_values(Rng& rng, double token_magnitude_log2, float* values) {
  const double token_magnitude =
      std::exp2(rng.uniform(-token_magnitude_log2, token_magnitude_log2));
  for (int tile = 0; tile < kDim / kTileDims; ++tile) {
    const double magnitude = token_magnitude * std::exp2(rng.uniform(-1.0, 1.0));
    for (int d = tile * kTileDims; d < (tile + 1) * kTileDims; ++d) {
      values[d] = static_cast<float>(magnitude * rng.normal());
    }
  }
}

// NaN bytes in every field of the slot, as in shared/vectors' *_nan_in_unselected cases; e4m3
// alternates between its two NaN codes from slot to slot.
void poison_token(smla_kv_layout layout, int page_size, int64_t page_stride_bytes, uint8_t* cache,
                  int64_t token) {
  const TokenLocation location = token_location(layout, page_size, page_stride_bytes, token);
  uint8_t* data = cache + location.data_offset;
  const uint8_t e4m3_nan = token % 2 == 0 ? 0x7F : 0xFF;
  auto fill_bf16_nan = [](uint8_t* bytes, int count) {
    for (int i = 0; i < count; ++i) {
      bytes[2 * i] = 0xC0;  // 0x7FC0, little-endian
      bytes[2 * i + 1] = 0x7F;
    }
  };
  switch (layout) {
    case SMLA_KV_FP8_UNIFORM:
      std::memset(data, e4m3_nan, SMLA_UNIFORM_TOKEN_BYTES);
      return;
    case SMLA_KV_FP8_PACKED:
      std::memset(data, e4m3_nan, 448);
      fill_bf16_nan(data + 448, 64);
      std::memset(cache + location.scale_offset, 0xFF,
                  SMLA_PACKED_TOKEN_BYTES - SMLA_PACKED_DATA_BYTES);
      return;
    case SMLA_KV_BF16:
      fill_bf16_nan(data, kDim);
      return;
  }
}

void fill_cache(Rng& rng, const CaseSpec& spec, const smla_source_desc& desc,
                const std::vector<bool>& selected, HostSource& source) {
  const smla_kv_layout layout = spec.problem.kv_layout;
  source.page_stride_bytes = smla_min_page_stride(layout, desc.page_size);
  if (rng.chance(kPaddedStrideChance)) source.page_stride_bytes += 16 * rng.uniform_int(1, 8);
  // Bytes that belong to no token (page tails) are 0xFF garbage too when poisoning.
  source.cache.assign(source.num_pages * source.page_stride_bytes,
                      spec.nan_in_unselected ? 0xFF : 0x00);
  float values[kDim];
  for (int64_t t = 0; t < source.num_pages * desc.page_size; ++t) {
    if (spec.nan_in_unselected && !selected[t]) {
      poison_token(layout, desc.page_size, source.page_stride_bytes, source.cache.data(), t);
      continue;
    }
    random_token_values(rng, spec.token_magnitude_log2, values);
    // The cache holds value / kv_scale, as a serving stack quantizes with its per-tensor scale.
    if (layout == SMLA_KV_FP8_UNIFORM) {
      for (float& value : values) value /= spec.kv_scale;
    }
    encode_token(layout, desc.page_size, source.page_stride_bytes, source.cache.data(), t, values);
    if (layout == SMLA_KV_FP8_PACKED) {
      // The padding byte carries garbage (as in the vectors), so using it as a scale shows.
      const TokenLocation location =
          token_location(layout, desc.page_size, source.page_stride_bytes, t);
      source.cache[location.scale_offset + 7] = static_cast<uint8_t>(rng.uniform_int(0, 255));
    }
  }
}

std::vector<uint8_t> random_q(Rng& rng, const CaseSpec& spec) {
  const int heads = spec.problem.num_heads;
  const bool fp8 = spec.problem.q_dtype == SMLA_FP8_E4M3;
  const size_t elements = static_cast<size_t>(spec.num_rows) * heads * kDim;
  std::vector<uint8_t> q(fp8 ? elements : 2 * elements);
  for (size_t vector = 0; vector < elements / kDim; ++vector) {
    const double magnitude = std::exp2(rng.uniform(-0.5, 0.5));
    for (size_t e = vector * kDim; e < (vector + 1) * kDim; ++e) {
      const float value = static_cast<float>(magnitude * rng.normal());
      if (fp8) {
        q[e] = float_to_e4m3(value / spec.q_scale);
      } else {
        const uint16_t bits = float_to_bf16(value);
        q[2 * e] = static_cast<uint8_t>(bits & 0xFF);
        q[2 * e + 1] = static_cast<uint8_t>(bits >> 8);
      }
    }
  }
  return q;
}

std::vector<float> random_sinks(Rng& rng, const CaseSpec& spec) {
  const int heads = spec.problem.num_heads;
  if (!spec.problem.has_sink) return {};
  std::vector<float> sink(heads);
  for (float& value : sink) value = static_cast<float>(rng.uniform(-2.0, 4.0));
  if (spec.infinite_sinks && heads >= 2) {
    const int64_t positive = rng.uniform_int(0, heads - 1);
    const int64_t negative = (positive + rng.uniform_int(1, heads - 1)) % heads;
    sink[positive] = std::numeric_limits<float>::infinity();
    sink[negative] = -std::numeric_limits<float>::infinity();
  }
  return sink;
}

bool has_structured_source(const smla_problem& problem) {
  for (int s = 0; s < problem.num_sources; ++s) {
    if (problem.sources[s].kind != SMLA_SOURCE_LIST) return true;
  }
  return false;
}

void fill_varlen(const CaseSpec& spec, HostCase& result) {
  const std::vector<int> rows =
      spec.request_rows.empty() ? std::vector<int>{spec.num_rows} : spec.request_rows;
  result.cu_seqlens_q = {0};
  for (size_t b = 0; b < rows.size(); ++b) {
    const int cached = b < spec.cached_tokens.size() ? spec.cached_tokens[b] : 0;
    result.cu_seqlens_q.push_back(result.cu_seqlens_q.back() + rows[b]);
    result.kv_lens.push_back(cached + rows[b]);
  }
}

}  // namespace

smla_varlen HostCase::host_varlen() const {
  smla_varlen varlen{};
  if (cu_seqlens_q.empty()) return varlen;
  varlen.num_requests = static_cast<int>(kv_lens.size());
  varlen.cu_seqlens_q = varlen.device_cu_seqlens_q = cu_seqlens_q.data();
  varlen.kv_lens = varlen.device_kv_lens = kv_lens.data();
  return varlen;
}

smla_args HostCase::host_args() const {
  smla_args args{};
  const int64_t head_elements = kDim;
  const int64_t row_elements = int64_t{problem.num_heads} * kDim;
  args.num_rows = num_rows;
  args.q = q.data();
  args.q_row_stride = row_elements;
  args.q_head_stride = head_elements;
  args.q_scale = q_scale;
  for (int s = 0; s < problem.num_sources; ++s) {
    const HostSource& source = sources[s];
    args.sources[s].cache = source.cache.data();
    args.sources[s].page_stride_bytes = source.page_stride_bytes;
    args.sources[s].num_pages = source.num_pages;
    args.sources[s].indices = source.indices.data();
    args.sources[s].index_row_stride = source.index_row_stride;
    args.sources[s].lengths = source.lengths.empty() ? nullptr : source.lengths.data();
  }
  args.kv_scale = kv_scale;
  args.sink = sink.empty() ? nullptr : sink.data();
  args.softmax_scale = softmax_scale;
  args.out_row_stride = row_elements;
  args.out_head_stride = head_elements;
  return args;
}

HostCase make_random_case(const CaseSpec& spec) {
  Rng rng(spec.seed);
  const smla_problem& problem = spec.problem;
  HostCase result;
  result.problem = problem;
  result.num_rows = spec.num_rows;
  result.q_scale = spec.q_scale;
  result.kv_scale = spec.kv_scale;
  result.softmax_scale = spec.softmax_scale;

  if (has_structured_source(problem)) fill_varlen(spec, result);
  const smla_varlen varlen = result.host_varlen();
  // A structured source's rows are never emptied: their lengths follow from their positions.
  bool every_source_allows_empty = true;
  for (int s = 0; s < problem.num_sources; ++s) {
    const smla_source_desc& desc = problem.sources[s];
    if (desc.kind != SMLA_SOURCE_LIST) {
      make_block_table(rng, desc, spec.sources[s], varlen, spec.nan_in_unselected,
                       result.sources[s]);
      every_source_allows_empty = false;
      continue;
    }
    make_source_tables(rng, s, desc, spec.sources[s], spec.num_rows, result.sources[s]);
    every_source_allows_empty = every_source_allows_empty && spec.sources[s].allow_empty_rows;
  }
  // Independent lengths rarely leave a row empty in every source; make sure one row is.
  if (every_source_allows_empty && spec.num_rows >= 2) {
    const int row = static_cast<int>(rng.uniform_int(0, spec.num_rows - 1));
    for (int s = 0; s < problem.num_sources; ++s) {
      make_row_empty(problem.sources[s], row, result.sources[s]);
    }
  }
  for (int s = 0; s < problem.num_sources; ++s) {
    const smla_source_desc& desc = problem.sources[s];
    if (desc.kind != SMLA_SOURCE_LIST) {
      fill_cache(rng, spec, desc,
                 selected_structured_tokens(desc, varlen, spec.num_rows, result.sources[s]),
                 result.sources[s]);
      continue;
    }
    const std::vector<bool> selected = selected_tokens(desc, spec.num_rows, result.sources[s]);
    place_traps(rng, desc, spec.num_rows, selected, spec.nan_in_unselected, result.sources[s]);
    fill_cache(rng, spec, desc, selected, result.sources[s]);
  }
  result.q = random_q(rng, spec);
  result.sink = random_sinks(rng, spec);
  return result;
}

}  // namespace smla::ref
