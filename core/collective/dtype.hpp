#pragma once
/// Element types of the data a collective moves and reduces (gradients): bf16, fp16, fp32.
/// Shared by the reductions (core/collective/reduce_ops) and the predictions (analysis/collective/predictions).
#include <string_view>

namespace meshperf::core {

/// An element type.
enum class dtype { bf16, fp16, fp32 };

/// "bf16", "fp16" or "fp32".
std::string_view to_string(dtype);
/// Parses "bf16", "fp16" or "fp32" (also "bfloat16", "float16", "half", "float32", "float";
/// case, '-' and '_' ignored); throws spec_error listing the names.
dtype parse_dtype(std::string_view);
/// Bytes per element: 2 or 4.
unsigned dtype_bytes(dtype);

}  // namespace meshperf::core
