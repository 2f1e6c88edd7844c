/// Fuzz target: what the ranks of a collective read from each other over their peer sessions
/// (daemon/collective/wire.hpp): a rank's point_done (rank_timing_from_json, with and
/// without --verify) and the coordinator's point_begin (collective_size_key_from_json against
/// a fixed plan). Peers are authenticated, but their JSON is not trusted: session_error is the
/// only outcome allowed for bad input. A point_done that is accepted must read back identical
/// from its JSON form, and the coordinator's assembly of two such reports as a ring
/// (core::assemble_collective_point) may only refuse them with core::insane_figure.
#include "core/collective/result.hpp"
#include "core/error.hpp"
#include "daemon/collective/wire.hpp"
#include "daemon/session/frame_channel.hpp"
#include "tests/fuzz/fuzz_checks.hpp"

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

namespace {

using namespace meshperf;

bool same_timing(const daemon::rank_timing& a, const daemon::rank_timing& b) {
    return a.iteration_s == b.iteration_s && a.link_in_s == b.link_in_s && a.wrong == b.wrong &&
           a.from_sender_s == b.from_sender_s;
}

void check_point_done(const nlohmann::json& j, bool verify) {
    constexpr std::uint64_t max_iterations = 64;
    daemon::rank_timing t;
    try {
        t = daemon::rank_timing_from_json(j, max_iterations, verify);
    } catch (const daemon::session_error&) {
        return;
    }
    try {
        const auto again = daemon::rank_timing_from_json(nlohmann::json::parse(daemon::to_json(t).dump()), max_iterations, verify);
        if (!same_timing(t, again)) fuzz::property_failed("a point_done does not read back identical from its JSON form");
    } catch (const daemon::session_error&) {
        fuzz::property_failed("a point_done accepted once is refused from its own JSON form");
    }
    // Two ranks that reported the same: the coordinator's ring all-reduce of 4 KiB.
    const std::vector<std::vector<double>> iterations{t.iteration_s, t.iteration_s};
    std::vector<std::vector<double>> links;
    if (!t.link_in_s.empty()) links = {t.link_in_s, t.link_in_s};
    std::vector<std::uint64_t> wrong;
    if (t.wrong) wrong = {*t.wrong, 0};
    try {
        const auto p = core::assemble_collective_point(core::collective_op::allreduce, core::collective_algo::ring, 2,
                                                       core::dtype::fp32, 4096, iterations, links, wrong);
        core::check_sane(core::collective_point_from_json(core::to_json(p)));
    } catch (const core::insane_figure&) {
    }
}

void check_point_begin(const nlohmann::json& j) {
    static const core::collective_spec spec = [] {
        core::collective_spec s;
        s.hosts = {"10.0.0.1:7470", "10.0.0.2:7470"};
        s.ops = {core::collective_op::allreduce, core::collective_op::alltoall};
        s.sizes = {4096, 1 << 20};
        return s;
    }();
    try {
        const auto key = daemon::collective_size_key_from_json(j, spec);
        const auto again = daemon::collective_size_key_from_json(nlohmann::json::parse(daemon::to_json(key).dump()), spec);
        if (again.op != key.op || again.size != key.size || again.index != key.index)
            fuzz::property_failed("a point_begin does not read back identical from its JSON form");
    } catch (const daemon::session_error&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto j = nlohmann::json::parse(std::string_view(reinterpret_cast<const char*>(data), size), nullptr, false);
    if (j.is_discarded()) return 0;
    check_point_done(j, false);
    check_point_done(j, true);
    check_point_begin(j);
    return 0;
}
