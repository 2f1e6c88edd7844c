#include "client/support/cli_wording.hpp"

#include <fmt/format.h>

namespace meshperf::client {

std::string json_error_text(std::string_view what) {
    if (what.rfind("[json.exception.", 0) == 0)
        if (const auto end = what.find("] "); end != std::string_view::npos) what.remove_prefix(end + 2);
    return std::string(what);
}

std::string with_option_name(std::string message, std::string_view field, std::string_view option) {
    const auto prefix = fmt::format("field '{}': ", field);
    if (message.rfind(prefix, 0) == 0) message.replace(0, prefix.size(), fmt::format("{}: ", option));
    return message;
}

std::string with_runs_command(std::string message, std::string_view host) {
    static constexpr std::string_view api = "list runs with GET /v1/runs";
    if (const auto at = message.find(api); at != std::string::npos)
        message.replace(at, api.size(), fmt::format("list them with: meshperf runs {}", host));
    return message;
}

std::string for_local_command(std::string gpu_message) {
    static constexpr std::string_view advice = ", or measure with --memory host";
    if (const auto at = gpu_message.find(advice); at != std::string::npos)
        gpu_message.replace(at, advice.size(),
                            "; meshperf local measures copies to, from and between GPUs, so it needs one (meshperf "
                            "sweep and collective measure host memory without a GPU)");
    return gpu_message;
}

std::string shortened(const std::string& text, std::size_t max) {
    if (max == 0) return "";
    std::size_t chars = 0, cut = std::string::npos;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;  // a continuation byte
        if (chars == max - 1) cut = i;
        if (++chars > max) return text.substr(0, cut) + "…";
    }
    return text;
}

}  // namespace meshperf::client
