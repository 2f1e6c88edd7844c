#include "core/run_state.hpp"

#include <array>
#include <utility>

namespace meshperf::core {

namespace {
constexpr std::array<std::pair<run_state, std::string_view>, 5> spellings{{{run_state::queued, "queued"},
                                                                            {run_state::running, "running"},
                                                                            {run_state::completed, "completed"},
                                                                            {run_state::failed, "failed"},
                                                                            {run_state::cancelled, "cancelled"}}};
}  // namespace

std::string_view to_string(run_state s) {
    for (const auto& [state, word] : spellings)
        if (state == s) return word;
    return "?";
}

std::optional<run_state> parse_run_state(std::string_view word) {
    for (const auto& [state, spelled] : spellings)
        if (spelled == word) return state;
    return std::nullopt;
}

recorded_state recorded_state::from_text(std::string word) {
    if (const auto s = parse_run_state(word)) return *s;
    recorded_state r;
    r.other_ = std::move(word);
    return r;
}

}  // namespace meshperf::core
