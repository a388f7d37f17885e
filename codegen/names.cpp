#include "codegen/names.h"

namespace smla {

const char* layout_name(smla_kv_layout layout) {
  switch (layout) {
    case SMLA_KV_FP8_UNIFORM:
      return "fp8_uniform";
    case SMLA_KV_FP8_PACKED:
      return "fp8_packed";
    case SMLA_KV_BF16:
      return "bf16";
  }
  return "?";
}

const char* dtype_name(smla_dtype dtype) { return dtype == SMLA_FP8_E4M3 ? "fp8_e4m3" : "bf16"; }

const char* source_kind_name(smla_source_kind kind) {
  switch (kind) {
    case SMLA_SOURCE_LIST:
      return "list";
    case SMLA_SOURCE_WINDOW:
      return "window";
    case SMLA_SOURCE_PREFIX:
      return "prefix";
  }
  return "?";
}

}  // namespace smla
