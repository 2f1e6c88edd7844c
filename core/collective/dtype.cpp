#include "core/collective/dtype.hpp"

#include "core/error.hpp"
#include "core/names.hpp"

#include <fmt/format.h>
#include <string>

namespace meshperf::core {

std::string_view to_string(dtype d) {
    switch (d) {
    case dtype::bf16: return "bf16";
    case dtype::fp16: return "fp16";
    case dtype::fp32: return "fp32";
    }
    return "?";
}

dtype parse_dtype(std::string_view s) {
    const std::string n = normalized_name(s);
    if (n == "bf16" || n == "bfloat16") return dtype::bf16;
    if (n == "fp16" || n == "float16" || n == "half") return dtype::fp16;
    if (n == "fp32" || n == "float32" || n == "float") return dtype::fp32;
    throw spec_error(fmt::format("unknown dtype \"{}\"; use bf16, fp16 or fp32", s));
}

unsigned dtype_bytes(dtype d) { return d == dtype::fp32 ? 4 : 2; }

}  // namespace meshperf::core
