#include "core/collective/spec.hpp"

#include "core/error.hpp"
#include "core/json_fields.hpp"
#include "core/sizes.hpp"
#include "core/transport_rules.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <ranges>
#include <set>
#include <stdexcept>

namespace meshperf::core {

using nlohmann::json;

namespace {

/// "allreduce, allgather, ...": every op name, for messages that list them.
std::string every_op_name() {
    std::vector<std::string_view> names;
    for (const auto& t : collective_ops()) names.push_back(t.name);
    return fmt::format("{}", fmt::join(names, ", "));
}

std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b) {
    std::uint64_t r = 0;
    return __builtin_mul_overflow(a, b, &r) ? ~0ull : r;
}
std::uint64_t add_sat(std::uint64_t a, std::uint64_t b) {
    std::uint64_t r = 0;
    return __builtin_add_overflow(a, b, &r) ? ~0ull : r;
}

/// "16777216 B (16 MiB)", or "1000 B" below 1 KiB: the exact count to type, and what it is.
std::string bytes_text(std::uint64_t bytes) {
    return bytes < 1024 ? fmt::format("{} B", bytes) : fmt::format("{} B ({})", bytes, format_size(bytes));
}

}  // namespace

std::string_view coordinator_of(const collective_spec& s) {
    if (s.coordinator) return *s.coordinator;
    return s.hosts.empty() ? std::string_view{} : std::string_view{s.hosts.front()};
}

collective_algo algo_for(const collective_spec& s, collective_op op) { return s.algo ? *s.algo : default_algo(op); }

std::vector<collective_op> parse_collective_op_list(std::string_view text) {
    std::vector<collective_op> out;
    // Split by hand: clang 14 (the sanitizer builds) cannot compile std::views::split over libstdc++ 12.
    for (std::size_t start = 0; start <= text.size();) {
        const auto comma = text.find(',', start);
        const auto end = comma == std::string_view::npos ? text.size() : comma;
        const std::string_view item = text.substr(start, end - start);
        start = end + 1;
        if (item.empty()) throw spec_error(fmt::format("op list '{}' has an empty item (use e.g. allreduce,allgather)", text));
        const auto op = parse_collective_op(item);
        if (std::ranges::find(out, op) == out.end()) out.push_back(op);
    }
    return out;
}

std::uint64_t size_step(collective_op op, unsigned ranks, dtype d) {
    const auto& traits = op_traits(op);
    if (traits.moves_bytes) return 1;
    const std::uint64_t element = dtype_bytes(d);
    return traits.per_rank_blocks ? element * std::max(ranks, 1u) : element;
}

std::string collective_shape_problem(collective_op op, collective_algo algo, unsigned ranks, dtype element,
                                     std::uint64_t size_bytes) {
    if (ranks < 2) return "a collective needs at least 2 ranks";
    if (!can_run(algo, op)) return fmt::format("algorithm {} does not run {}", to_string(algo), to_string(op));
    const auto step = size_step(op, ranks, element);
    if (size_bytes == 0 || size_bytes % step != 0) return fmt::format("the size must be a positive multiple of {} bytes", step);
    return {};
}

std::uint64_t size_step(const collective_spec& s) {
    std::uint64_t step = 1;
    for (auto op : s.ops) step = std::lcm(step, size_step(op, static_cast<unsigned>(s.hosts.size()), s.element));
    return step;
}

std::uint64_t collective_rank_bytes(collective_op op, collective_algo algo, unsigned ranks, dtype d, std::uint64_t size) {
    if (ranks < 2) throw spec_error(fmt::format("a collective needs at least 2 ranks, not {}", ranks));
    require_can_run(algo, op);
    return op_traits(op).busiest_rank_bytes(algo, ranks, d, size);
}

std::uint64_t collective_size_bytes(const collective_spec& s, collective_op op, std::uint64_t size) {
    if (!s.iterations) return 0;
    const auto per_iteration = collective_rank_bytes(op, algo_for(s, op), static_cast<unsigned>(s.hosts.size()), s.element, size);
    return mul_sat(add_sat(*s.iterations, s.warmup_iterations), per_iteration);
}

collective_spec normalize_endpoints(collective_spec s, const endpoint_normalizer& normalize) {
    if (!normalize) throw std::logic_error("normalize_endpoints: no endpoint normalizer given");
    for (std::size_t r = 0; r < s.hosts.size(); ++r) {
        try {
            s.hosts[r] = normalize(s.hosts[r]);
        } catch (const spec_error& e) {
            throw spec_error(fmt::format("hosts: rank {}: {}", r, e.what()));
        }
    }
    if (s.coordinator) {
        try {
            s.coordinator = normalize(*s.coordinator);
        } catch (const spec_error& e) {
            throw spec_error(fmt::format("coordinator: {}", e.what()));
        }
    }
    return s;
}

namespace {

void check_hosts(const collective_spec& written, const endpoint_normalizer& normalize, const collective_limits& lim) {
    const auto n = written.hosts.size();
    if (n < 2)
        throw spec_error(fmt::format("a collective needs at least 2 hosts and {}: give every daemon that takes part as "
                                     "HOST[:PORT], one per rank",
                                     n == 0 ? "none is given" : fmt::format("only {} is given", written.hosts.front())));
    if (n > lim.max_ranks)
        throw spec_error(fmt::format("{} hosts are more than the {} ranks a collective may have (limits.max_ranks): give at "
                                     "most {} hosts",
                                     n, lim.max_ranks, lim.max_ranks));
    const auto s = normalize_endpoints(written, normalize);
    std::map<std::string_view, std::size_t> rank_of;
    for (std::size_t r = 0; r < n; ++r) {
        const auto [at, fresh] = rank_of.try_emplace(s.hosts[r], r);
        if (fresh) continue;
        const auto first = at->second;
        const auto spelled = written.hosts[first] == written.hosts[r]
                                 ? std::string{}
                                 : fmt::format(", written '{}' and '{}'", written.hosts[first], written.hosts[r]);
        throw spec_error(fmt::format("hosts: {} is given twice (ranks {} and {}{}): give each daemon once", s.hosts[r], first, r,
                                     spelled));
    }
    if (s.coordinator && !rank_of.contains(*s.coordinator))
        throw spec_error(fmt::format("coordinator {} is not one of the hosts: give one of them (the coordinator takes part as a "
                                     "rank and runs the barrier), or leave it out for the first host, {}",
                                     *s.coordinator, s.hosts.front()));
}

void check_ops(const collective_spec& s) {
    if (s.ops.empty()) throw spec_error(fmt::format("no ops: give at least one of {}", every_op_name()));
    for (auto it = s.ops.begin(); it != s.ops.end(); ++it)
        if (std::find(s.ops.begin(), it, *it) != it)
            throw spec_error(fmt::format("ops: {} is given twice: give each op once", to_string(*it)));
    if (!s.algo) return;
    for (auto op : s.ops) {
        try {
            require_can_run(*s.algo, op);
        } catch (const spec_error& e) {
            throw spec_error(fmt::format("{} (or leave out --algo: each op then runs its own default, ring where it runs, else "
                                         "direct)",
                                         e.what()));
        }
    }
}

void check_sizes(const collective_spec& s) {
    if (s.sizes.empty()) throw spec_error("no sizes: give sizes such as 1K..64M or 4K,1M,16M");
    for (auto sz : s.sizes)
        if (sz == 0 || sz > max_message_size)
            throw spec_error(fmt::format("size {} is out of range: sizes run from 1 B to {}", sz, format_size(max_message_size)));
    if (!std::is_sorted(s.sizes.begin(), s.sizes.end()) || std::adjacent_find(s.sizes.begin(), s.sizes.end()) != s.sizes.end())
        throw spec_error("sizes must be ascending and unique");
}

/// Refuses the first size an op cannot run, with the nearest sizes every op of the run can.
void check_size_steps(const collective_spec& s) {
    const auto p = static_cast<unsigned>(s.hosts.size());
    const auto common = size_step(s);
    for (auto op : s.ops) {
        const auto step = size_step(op, p, s.element);
        const auto bad = std::count_if(s.sizes.begin(), s.sizes.end(), [&](std::uint64_t sz) { return sz % step != 0; });
        if (bad == 0) continue;
        const auto size = *std::find_if(s.sizes.begin(), s.sizes.end(), [&](std::uint64_t sz) { return sz % step != 0; });
        const auto element = dtype_bytes(s.element);
        const auto what =
            op_traits(op).per_rank_blocks
                ? fmt::format("size {} cannot be cut into {} equal blocks of whole {} elements, as {} over {} ranks needs (a "
                              "size must be a multiple of {} x {} B = {} B)",
                              bytes_text(size), p, to_string(s.element), to_string(op), p, p, element, step)
                : fmt::format("size {} is not a whole number of {} elements ({} B each), as {} needs", bytes_text(size),
                              to_string(s.element), element, to_string(op));
        const auto below = size / common * common, above = below + common;
        const auto every = s.ops.size() > 1 ? " for every op of the run" : "";
        std::string use;
        if (below == 0) use = fmt::format("use {} B, the smallest size valid{}", above, every);
        else if (above > max_message_size) use = fmt::format("use {} B, the nearest size below valid{}", below, every);
        else use = fmt::format("use {} or {} B, the nearest sizes below and above valid{}", below, above, every);
        const auto more = bad > 1 ? fmt::format(" ({} more size{} of the list cannot either)", bad - 1, bad > 2 ? "s" : "") : "";
        throw spec_error(fmt::format("{}: {}{}", what, use, more));
    }
}

/// The largest multiple of `step` up to max_message_size of which `counted` iterations of op
/// fit within `cap` bytes for the busiest rank; 0 when none does.
std::uint64_t largest_fitting_size(const collective_spec& s, collective_op op, std::uint64_t counted, std::uint64_t cap,
                                   std::uint64_t step) {
    const auto p = static_cast<unsigned>(s.hosts.size());
    const auto fits = [&](std::uint64_t k) {
        return mul_sat(counted, collective_rank_bytes(op, algo_for(s, op), p, s.element, k * step)) <= cap;
    };
    std::uint64_t lo = 0, hi = max_message_size / step;  // fits(lo) holds; find the last k that fits
    if (fits(hi)) return hi * step;
    while (hi - lo > 1) {
        const auto mid = lo + (hi - lo) / 2;
        (fits(mid) ? lo : hi) = mid;
    }
    return lo * step;
}

/// The largest size of the spec against limits.run.max_bytes_per_point, for the busiest
/// rank: a fixed-length size is refused beyond it, warm-up included; a timed size must at
/// least fit its warm-up and one iteration (it stops at the limit while it runs).
void check_bytes_per_size(const collective_spec& s, const collective_limits& lim) {
    const auto cap = lim.run.max_bytes_per_point;
    const auto size = s.sizes.back();
    const auto p = static_cast<unsigned>(s.hosts.size());
    const auto counted = add_sat(s.iterations ? *s.iterations : 1, s.warmup_iterations);
    const auto how = fmt::format("(limits.max_bytes_per_point of this daemon is {}; an operator may raise it in [limits] "
                                 "max_bytes_per_point)",
                                 format_size(cap));
    for (auto op : s.ops) {
        const auto algo = algo_for(s, op);
        const auto per_iteration = collective_rank_bytes(op, algo, p, s.element, size);
        const auto bytes = mul_sat(counted, per_iteration);
        if (bytes <= cap) continue;
        const auto fit = largest_fitting_size(s, op, counted, cap, size_step(s));
        const auto sizes = fit ? fmt::format("use sizes up to {} B ({}), the largest that fits", fit, format_size(fit))
                               : std::string{"no size fits"};
        const auto what = fmt::format("{} ({}) of {} over {} ranks", to_string(op), to_string(algo), format_size(size), p);
        if (s.iterations) {
            const auto fit_iterations = per_iteration ? cap / per_iteration : 0;
            const auto fewer = fit_iterations > s.warmup_iterations
                                   ? fmt::format(", or at most {} iterations", fit_iterations - s.warmup_iterations)
                                   : std::string{};
            throw spec_error(fmt::format("{} would move {} through the busiest rank per direction ({} iterations, {} of them "
                                         "warm-up, x {}), more than {} allowed per size {}: {}{}, or give --duration, which "
                                         "stops at the limit",
                                         what, format_size(bytes), counted, s.warmup_iterations, format_size(per_iteration),
                                         format_size(cap), how, sizes, fewer));
        }
        throw spec_error(fmt::format("{} moves {} through the busiest rank per direction in its {} warm-up iterations and one "
                                     "measured one, more than {} allowed per size {}: {}, or fewer warm-up iterations",
                                     what, format_size(bytes), s.warmup_iterations, format_size(cap), how, sizes));
    }
}

void check_length(const collective_spec& s, const collective_limits& lim) {
    const auto max_iterations = lim.run.max_iterations;
    if (s.iterations && s.duration_s) throw spec_error("iterations and duration both fix a size's length: give one of them");
    if (!s.iterations && !s.duration_s)
        throw spec_error(fmt::format("nothing fixes a size's length: give iterations (nccl-tests' default is {}) or a duration",
                                     default_collective_iterations));
    if (s.iterations && (*s.iterations == 0 || *s.iterations > max_iterations))
        throw spec_error(fmt::format("iterations {} is out of range: use 1..{}", *s.iterations, max_iterations));
    if (s.warmup_iterations > max_iterations)
        throw spec_error(fmt::format("warm-up iterations {} is out of range: use 0..{}", s.warmup_iterations, max_iterations));
    if (s.duration_s && (!std::isfinite(*s.duration_s) || *s.duration_s < 0.01 || *s.duration_s > lim.run.max_duration_s))
        throw spec_error(fmt::format("duration {} s is out of range: use {}..{} s", *s.duration_s, 0.01, lim.run.max_duration_s));
}

void check_model_file(const collective_spec& s) {
    if (!s.model_file) return;
    if (s.model_file->empty()) throw spec_error("--model has an empty path: give the JSON file of a matrix run");
    if (!s.predict)
        throw spec_error(fmt::format("--model {} is only read for --predict: add --predict, or leave out --model", *s.model_file));
}

}  // namespace

namespace {
/// The RDMA options: in range, and only with a transport that has them (elsewhere they would
/// be ignored).
void check_rdma_options(const collective_spec& s) {
    if (!transport_rules_of(s.transport).device_fields && (!s.rdma_device.empty() || s.rdma_port != 1 || s.gid_index))
        throw spec_error("rdma_device, rdma_port and gid_index apply to transport rdma only: drop them, or use --transport rdma");
    if (s.rdma_device.size() > 64 || s.rdma_device.find_first_of(" /\t\n") != std::string::npos)
        throw spec_error(fmt::format("RDMA device name '{}' is not a device name (ibv_devices lists them)", s.rdma_device));
    if (s.rdma_port == 0 || s.rdma_port > 255) throw spec_error(fmt::format("RDMA port {} is out of range: use 1..255", s.rdma_port));
    if (s.gid_index && (*s.gid_index < 0 || *s.gid_index > 1023))
        throw spec_error(fmt::format("GID index {} is out of range: use 0..1023", *s.gid_index));
}
}  // namespace

void validate(const collective_spec& s, const endpoint_normalizer& normalize, const collective_limits& lim) {
    check_hosts(s, normalize, lim);
    check_ops(s);
    check_sizes(s);
    check_memory_domain("memory", s.memory);
    check_rdma_options(s);
    check_length(s, lim);
    check_model_file(s);
    check_size_steps(s);
    check_bytes_per_size(s, lim);
}

json to_json(const collective_spec& s) {
    json j;
    j["hosts"] = s.hosts;
    j["coordinator"] = s.coordinator ? json(*s.coordinator) : json(nullptr);
    j["ops"] = json::array();
    for (auto op : s.ops) j["ops"].push_back(to_string(op));
    j["algo"] = s.algo ? json(to_string(*s.algo)) : json(nullptr);
    j["sizes"] = s.sizes;
    j["transport"] = s.transport;
    if (transport_rules_of(s.transport).device_fields) {
        j["rdma_device"] = s.rdma_device;
        j["rdma_port"] = s.rdma_port;
        j["gid_index"] = s.gid_index ? json(*s.gid_index) : json(nullptr);
    }
    j["memory"] = s.memory;
    j["dtype"] = to_string(s.element);
    j["verify"] = s.verify;
    j["iterations"] = s.iterations ? json(*s.iterations) : json(nullptr);
    j["duration_s"] = s.duration_s ? json(*s.duration_s) : json(nullptr);
    j["warmup_iterations"] = s.warmup_iterations;
    j["predict"] = s.predict;
    return j;  // never model_file: the client reads the model itself
}

namespace {

std::string field_string(const json& v, std::string_view key) {
    if (!v.is_string()) throw spec_error(fmt::format("field '{}' must be a string, not {}", key, v.type_name()));
    return v.get<std::string>();
}
bool field_bool(const json& v, std::string_view key) {
    if (!v.is_boolean()) throw spec_error(fmt::format("field '{}' must be true or false, not {}", key, v.type_name()));
    return v.get<bool>();
}

std::vector<std::string> field_hosts(const json& v) {
    if (!v.is_array())
        throw spec_error(fmt::format("field 'hosts' must be an array of \"HOST[:PORT]\" strings, one per rank, not {}",
                                     v.type_name()));
    std::vector<std::string> out;
    for (const auto& h : v) out.push_back(field_string(h, fmt::format("hosts[{}]", out.size())));
    return out;
}

std::vector<collective_op> field_ops(const json& v) {
    if (v.is_string()) return parse_collective_op_list(v.get<std::string>());
    if (!v.is_array()) throw spec_error("field 'ops' must be an array of op names or a string like \"allreduce,allgather\"");
    std::vector<collective_op> out;
    for (const auto& name : v) {
        const auto op = parse_collective_op(field_string(name, "ops[]"));
        if (std::find(out.begin(), out.end(), op) == out.end()) out.push_back(op);
    }
    return out;
}

std::vector<std::uint64_t> field_sizes(const json& v) {
    // Measured as sent or refused: the API never reorders silently (docs/api.md).
    size_list list;
    if (v.is_string()) list = parse_size_list_as_written(v.get<std::string>());
    else if (v.is_array()) {
        std::vector<std::uint64_t> as_sent;
        for (const auto& x : v) as_sent.push_back(json_unsigned(x, "sizes[]"));
        list = make_size_list(std::move(as_sent));
    } else throw spec_error("field 'sizes' must be an array of byte counts or a string like \"1K..64M\"");
    require_ascending("sizes", list);
    return std::move(list.sizes);
}

}  // namespace

collective_spec collective_spec_from_json(const json& j, const endpoint_normalizer& normalize, const collective_limits& lim) {
    if (!j.is_object()) throw spec_error(fmt::format("a collective spec must be a JSON object, not {}", j.type_name()));
    static const std::set<std::string, std::less<>> known = {
        "hosts", "coordinator", "ops", "algo", "sizes", "transport", "rdma_device", "rdma_port", "gid_index", "memory",
        "dtype", "verify", "iterations", "duration_s", "warmup_iterations", "predict"};
    for (const auto& [key, value] : j.items()) {
        if (key == "model_file")
            throw spec_error("field 'model_file' is not part of a collective spec: the client reads --model and predicts "
                             "itself; send the run without it");
        if (!known.contains(key)) throw spec_error(fmt::format("unknown field '{}' in collective spec", key));
    }
    if (!j.contains("hosts"))
        throw spec_error("collective spec has no 'hosts': give the daemons as [\"host:port\", ...], one per rank");

    collective_spec s;
    s.sizes = parse_size_list("1K..64M");
    std::optional<std::uint64_t> iterations;
    for (const auto& [key, v] : j.items()) {
        if (key == "hosts") s.hosts = field_hosts(v);
        else if (key == "coordinator") { if (!v.is_null()) s.coordinator = field_string(v, key); }
        else if (key == "ops") s.ops = field_ops(v);
        else if (key == "algo") { if (!v.is_null()) s.algo = parse_collective_algo(field_string(v, key)); }
        else if (key == "sizes") s.sizes = field_sizes(v);
        else if (key == "transport") s.transport = transport_rules_of(field_string(v, key)).name;
        else if (key == "rdma_device") s.rdma_device = field_string(v, key);
        else if (key == "rdma_port") {
            const auto port = json_unsigned(v, key);
            s.rdma_port = port > 65535 ? 0 : static_cast<std::uint32_t>(port);  // out of range either way: refused by validate
        }
        else if (key == "gid_index") {
            if (v.is_null()) continue;
            const auto g = json_unsigned(v, key);
            s.gid_index = g > 1023 ? 1024 : static_cast<int>(g);
        }
        else if (key == "memory") s.memory = field_string(v, key);
        else if (key == "dtype") s.element = parse_dtype(field_string(v, key));
        else if (key == "verify") s.verify = field_bool(v, key);
        else if (key == "iterations") { if (!v.is_null()) iterations = json_unsigned(v, key); }
        else if (key == "duration_s") {
            if (v.is_null()) continue;
            if (!v.is_number()) throw spec_error(fmt::format("field 'duration_s' must be a number, not {}", v.type_name()));
            s.duration_s = v.get<double>();
        }
        else if (key == "warmup_iterations") s.warmup_iterations = json_unsigned(v, key);
        else if (key == "predict") s.predict = field_bool(v, key);
    }
    if (iterations) s.iterations = iterations;
    else if (s.duration_s) s.iterations.reset();
    validate(s, normalize, lim);  // before normalizing, so that a refusal quotes the hosts as sent
    return normalize_endpoints(std::move(s), normalize);
}

}  // namespace meshperf::core
