// KV layout codecs (docs/semantics.md): scalar fp8/bf16 conversions, and encoding/decoding one
// token of each layout at its place inside a paged cache. Host only; used by tests and tools.
#pragma once

#include <smla.h>

#include <cstdint>

namespace smla::ref {

// E4M3 "FN" (OCP FP8): bias 7, no infinities, 0x7F and 0xFF are NaN, largest finite 448.
float e4m3_to_float(uint8_t bits);
// Round to nearest, ties to even; saturates to +-448 (infinities included); NaN maps to 0x7F;
// whatever rounds to zero (-0 included) is +0 (0x00), as shared/vectors/codec.json has it.
uint8_t float_to_e4m3(float value);
float bf16_to_float(uint16_t bits);
// Round to nearest, ties to even (NaN stays NaN).
uint16_t float_to_bf16(float value);
// A ue8m0 scale byte e means 2^(e - 127); 0xFF is NaN (as in OCP MX E8M0), which is also what
// the NaN poison of unselected packed slots writes there.
double ue8m0_to_double(uint8_t bits);

// Where token `token` (physical index) of a paged cache lives: its first data byte, and for the
// packed layout its 8 scale bytes (7 scales + 1 padding byte); -1 for other layouts.
struct TokenLocation {
  int64_t data_offset;
  int64_t scale_offset;
};
TokenLocation token_location(smla_kv_layout layout, int page_size, int64_t page_stride_bytes,
                             int64_t token);

// The bytes of one token of `layout` (docs/semantics.md: 512, 584 or 1024).
int64_t token_bytes(smla_kv_layout layout);

// Encodes 512 values [nope 448 | rope 64] of one token into the cache at its location.
// Packed: per-64 ue8m0 scale 2^ceil(log2(amax/448)) (2^0 for an all-zero tile; the exponent
// clamped to the ue8m0 range [-127, 127]), e4m3 of value/scale, bf16 rope, padding byte 0.
// Values are expected to be finite. Uniform: e4m3 of value (scale 1; the per-tensor
// kv_scale is the caller's). BF16: bf16 of every value.
void encode_token(smla_kv_layout layout, int page_size, int64_t page_stride_bytes, uint8_t* cache,
                  int64_t token, const float* values);

// Decodes one token into 512 exact dequantized values (kv_scale applies to the uniform layout).
void decode_token(smla_kv_layout layout, int page_size, int64_t page_stride_bytes,
                  const uint8_t* cache, int64_t token, float kv_scale, double* values);

// Encodes one token into a standalone byte string as in shared/vectors/codec.json:
// packed 584 bytes (data then scales), uniform 512, bf16 1024.
void encode_token_bytes(smla_kv_layout layout, const float* values, uint8_t* bytes);

}  // namespace smla::ref
