// The spellings of the public enums in key texts, tuning rows and deployment files.
#pragma once

#include <smla.h>

namespace smla {

const char* layout_name(smla_kv_layout layout);  // "fp8_uniform", "fp8_packed", "bf16"
const char* dtype_name(smla_dtype dtype);        // "bf16", "fp8_e4m3"
const char* source_kind_name(smla_source_kind kind);  // "list", "window", "prefix"

}  // namespace smla
