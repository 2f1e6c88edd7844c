#include "core/run_spec.hpp"

#include "core/error.hpp"
#include "core/sizes.hpp"
#include "core/transport_rules.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <set>

namespace meshperf::core {

using nlohmann::json;

namespace {

template <class E, std::size_t N>
E parse_enum(std::string_view what, std::string_view text, const std::pair<std::string_view, E> (&names)[N]) {
    for (const auto& [name, value] : names)
        if (name == text) return value;
    std::vector<std::string_view> accepted;
    for (const auto& entry : names) accepted.push_back(entry.first);
    throw spec_error(fmt::format("unknown {} '{}': use one of {}", what, text, fmt::join(accepted, ", ")));
}

constexpr std::pair<std::string_view, test_kind> test_names[] = {
    {"latency", test_kind::latency}, {"bandwidth", test_kind::bandwidth}, {"bidir", test_kind::bidir}};
constexpr std::pair<std::string_view, rdma_op> op_names[] = {
    {"write", rdma_op::write}, {"read", rdma_op::read}, {"send", rdma_op::send}};
constexpr std::pair<std::string_view, ofi_op> ofi_op_names[] = {
    {"tagged", ofi_op::tagged}, {"msg", ofi_op::msg}, {"write", ofi_op::write}, {"read", ofi_op::read}};

}  // namespace

std::string_view to_string(ofi_op op) {
    for (const auto& [name, value] : ofi_op_names)
        if (value == op) return name;
    return "tagged";
}

ofi_op parse_ofi_op(std::string_view text) { return parse_enum("libfabric operation", text, ofi_op_names); }

const std::string& rail_memory(const run_spec& s, const rail_pair& rail, bool initiator) {
    const auto& own = initiator ? rail.local_memory : rail.peer_memory;
    return own.empty() ? (initiator ? s.local_memory : s.remote_memory) : own;
}

std::vector<std::string> side_memories(const run_spec& s, bool initiator) {
    if (s.rails.empty()) return {initiator ? s.local_memory : s.remote_memory};
    std::vector<std::string> out;
    for (const auto& r : s.rails) out.push_back(rail_memory(s, r, initiator));
    return out;
}

bool uses_gpu_memory(const run_spec& s) {
    for (const bool initiator : {true, false})
        for (const auto& m : side_memories(s, initiator))
            if (m != "host") return true;
    return false;
}

namespace {

/// A side's memory: host, cuda:N, or cuda:auto when every rail carries that side's GPU.
void check_side_memory(const run_spec& s, bool initiator) {
    const auto& m = initiator ? s.local_memory : s.remote_memory;
    const char* field = initiator ? "local memory" : "remote memory";
    if (m != nearest_gpu_memory) return check_memory_domain(field, m);
    if (s.rails.empty())
        throw spec_error(fmt::format("{} 'cuda:auto' puts each rail's buffers on the GPU nearest its NIC: give --rails, or name "
                                     "the GPU with cuda:N",
                                     field));
    for (const auto& r : s.rails)
        if ((initiator ? r.local_memory : r.peer_memory).empty())
            throw spec_error(fmt::format("{} 'cuda:auto' but rail {} has no {}: the CLI resolves cuda:auto from both daemons' "
                                         "GET /v1/info; a spec written by hand gives each rail's local_memory and peer_memory",
                                         field, r.name, initiator ? "local_memory" : "peer_memory"));
}

/// a × b, saturating at UINT64_MAX.
std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b) {
    std::uint64_t r = 0;
    return __builtin_mul_overflow(a, b, &r) ? ~0ull : r;
}

}  // namespace

const std::vector<int>& cpus_for_side(const run_spec& s, bool initiator) {
    const auto& own = initiator ? s.initiator_cpus : s.peer_cpus;
    return own.empty() ? s.cpus : own;
}

run_spec spec_for_peer(const run_spec& s) {
    run_spec out = s;
    out.cpus = cpus_for_side(s, false);
    out.initiator_cpus.clear();
    out.peer_cpus.clear();
    return out;
}

std::uint32_t streams_per_direction(const run_spec& s, test_kind t) {
    if (t == test_kind::latency) return 1;
    return s.streams * static_cast<std::uint32_t>(std::max<std::size_t>(1, s.rails.size()));
}

std::uint64_t fixed_point_bytes(const run_spec& s, test_kind t, std::uint64_t size) {
    if (!s.iterations) return 0;
    return mul_sat(mul_sat(*s.iterations, size), streams_per_direction(s, t));
}

namespace {

/// The largest point of the spec against limits.max_bytes_per_point: a fixed-length point
/// beyond it is refused; an adaptive or duration point must at least fit one message per
/// stream (it stops at the limit while it runs).
void check_bytes_per_point(const run_spec& s, const run_limits& lim) {
    const auto cap = lim.max_bytes_per_point;
    const auto size = s.sizes.back();
    test_kind widest = s.tests.front();
    for (auto t : s.tests)
        if (streams_per_direction(s, t) > streams_per_direction(s, widest)) widest = t;
    const auto n = streams_per_direction(s, widest);
    const auto how = fmt::format("(limits.max_bytes_per_point of this daemon is {}; an operator may raise it in [limits] "
                                 "max_bytes_per_point)", format_size(cap));
    if (s.iterations) {
        const auto bytes = fixed_point_bytes(s, widest, size);
        if (bytes <= cap) return;
        const auto per_message_round = mul_sat(size, n);
        const auto fit = per_message_round ? cap / per_message_round : 0;
        throw spec_error(fmt::format(
            "the {} {} point would move {} per direction ({} iterations x {} x {} stream{}), more than {} allowed per point {}: "
            "{}, or give --duration or the adaptive default, which stop at the limit",
            format_size(size), to_string(widest), format_size(bytes), *s.iterations, format_size(size), n, n == 1 ? "" : "s",
            format_size(cap), how,
            fit ? fmt::format("use at most {} iterations, fewer streams or smaller sizes", fit) : "use fewer streams or smaller sizes"));
    }
    const auto one_each = mul_sat(size, n);
    if (one_each > cap)
        throw spec_error(fmt::format("one {} message on each of {} stream{} is already {} per direction, more than {} allowed per "
                                     "point {}: use smaller sizes or fewer streams",
                                     format_size(size), n, n == 1 ? "" : "s", format_size(one_each), format_size(cap), how));
}

}  // namespace

std::string_view to_string(test_kind k) {
    for (const auto& [n, v] : test_names) if (v == k) return n;
    return "?";
}
std::string_view to_string(rdma_op k) {
    for (const auto& [n, v] : op_names) if (v == k) return n;
    return "?";
}
test_kind parse_test_kind(std::string_view s) { return parse_enum("test", s, test_names); }
rdma_op parse_rdma_op(std::string_view s) { return parse_enum("RDMA operation", s, op_names); }

std::vector<test_kind> parse_test_list(std::string_view text) {
    std::vector<test_kind> out;
    std::size_t pos = 0;
    while (true) {
        const auto comma = text.find(',', pos);
        const auto item = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
        if (item.empty()) throw spec_error(fmt::format("test list '{}' has an empty item (use e.g. latency,bandwidth)", text));
        const auto k = parse_test_kind(item);
        if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
        if (comma == std::string_view::npos) break;
        pos = comma + 1;
    }
    return out;
}

std::vector<int> parse_cpu_list(std::string_view text) {
    std::vector<int> out;
    std::size_t pos = 0;
    auto number = [&](std::string_view s) {
        if (s.empty() || s.size() > 5 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
            throw spec_error(fmt::format("CPU list '{}': '{}' is not a CPU number (use e.g. 0,2-3)", text, s));
        return std::stoi(std::string(s));
    };
    while (true) {
        const auto comma = text.find(',', pos);
        const auto item = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
        const auto dash = item.find('-');
        if (dash == std::string_view::npos) {
            out.push_back(number(item));
        } else {
            const int lo = number(item.substr(0, dash)), hi = number(item.substr(dash + 1));
            if (lo > hi) throw spec_error(fmt::format("CPU range '{}' runs backwards", item));
            for (int c = lo; c <= hi; ++c) out.push_back(c);
        }
        if (comma == std::string_view::npos) break;
        pos = comma + 1;
    }
    return out;
}

namespace {

/// Whether the spec's transport carries `field` of its own (transport_rules::own_fields).
bool carries_field(const run_spec& s, std::string_view field) {
    const auto& own = transport_rules_of(s.transport).own_fields;
    return std::find(own.begin(), own.end(), field) != own.end();
}

/// The rails against the rest of the spec (rail_spec.hpp checks the list itself).
void check_rails(const run_spec& s, const run_limits& lim) {
    if (s.rails.empty()) return;
    validate_rails(s.rails);
    if (!s.rdma_device.empty()) throw spec_error("rails and rdma_device both choose the path: give one of them");
    // Over RDMA each rail's endpoint takes the RoCE v2 GID of its own address.
    if (s.gid_index) throw spec_error("rails and gid_index: each rail uses the GID of its own address; leave out --gid-index");
    const auto total = static_cast<std::uint64_t>(s.streams) * s.rails.size();
    if (total > lim.max_streams)
        throw spec_error(fmt::format("{} streams on each of {} rails is {} streams per direction, more than {} (limits.max_streams "
                                     "of this daemon; an operator may raise it in [limits] max_streams): use fewer streams or rails",
                                     s.streams, s.rails.size(), total, lim.max_streams));
    if (s.rails.size() > 1 && std::find(s.tests.begin(), s.tests.end(), test_kind::latency) != s.tests.end())
        throw spec_error(fmt::format("latency over {} rails at once would time one rail while the others load the host: measure "
                                     "latency one rail after the other (--rails-serial), or give --test bandwidth or bidir",
                                     s.rails.size()));
}

}  // namespace

void validate(const run_spec& s, const run_limits& lim) {
    if (s.peer.empty()) throw spec_error("no peer: give the peer daemon as HOST[:PORT]");
    if (s.peer.size() > 300) throw spec_error(fmt::format("peer is {} bytes long: give the peer daemon as HOST[:PORT]", s.peer.size()));
    // A NUL filed the run under a truncated peer; control bytes and non-ASCII are no host name.
    for (std::size_t i = 0; i < s.peer.size(); ++i)
        if (const auto c = static_cast<unsigned char>(s.peer[i]); c <= 0x20 || c >= 0x7f)
            throw spec_error(fmt::format("peer has byte 0x{:02x} at position {}: give the peer daemon as HOST[:PORT] in "
                                         "printable ASCII",
                                         c, i));
    if (s.tests.empty()) throw spec_error("no tests: give at least one of latency, bandwidth, bidir");
    if (s.sizes.empty()) throw spec_error("no sizes: give sizes such as 1..4M or 64,4K,1M");
    for (auto sz : s.sizes)
        if (sz == 0 || sz > max_message_size)
            throw spec_error(fmt::format("size {} is out of range: sizes run from 1 B to {}", sz, format_size(max_message_size)));
    if (!std::is_sorted(s.sizes.begin(), s.sizes.end()) ||
        std::adjacent_find(s.sizes.begin(), s.sizes.end()) != s.sizes.end())
        throw spec_error("sizes must be ascending and unique");
    const auto& rules = transport_rules_of(s.transport);
    rules.check_streams(s, lim);
    check_rails(s, lim);
    if (s.iterations && s.duration_s) throw spec_error("iterations and duration both fix a point's length: give one of them");
    if (s.iterations && (*s.iterations == 0 || *s.iterations > lim.max_iterations))
        throw spec_error(fmt::format("iterations {} is out of range: use 1..{}", *s.iterations, lim.max_iterations));
    if (rules.check_length) rules.check_length(s);
    check_bytes_per_point(s, lim);
    auto check_seconds = [&](const char* what, double v, double lo, double hi) {
        if (!std::isfinite(v) || v < lo || v > hi)
            throw spec_error(fmt::format("{} {} s is out of range: use {}..{} s", what, v, lo, hi));
    };
    if (s.duration_s) check_seconds("duration", *s.duration_s, 0.01, lim.max_duration_s);
    check_seconds("max point time", s.max_point_s, 0.01, lim.max_duration_s);
    check_seconds("warm-up", s.warmup_s, 0.0, 10.0);
    if (!std::isfinite(s.precision) || s.precision <= 0.0 || s.precision >= 1.0)
        throw spec_error(fmt::format("precision {} is out of range: give a fraction in (0, 1), e.g. 0.01 for 1%", s.precision));
    if (s.window_bytes && (*s.window_bytes < 4096 || *s.window_bytes > (1ull << 30)))
        throw spec_error(fmt::format("window {} bytes is out of range: use 4K..1G", *s.window_bytes));
    for (const auto* list : {&s.cpus, &s.initiator_cpus, &s.peer_cpus})
        for (int c : *list)
            if (c < 0 || c > 65535) throw spec_error(fmt::format("CPU {} is out of range: CPU numbers run from 0", c));
    if (!s.cpus.empty() && (!s.initiator_cpus.empty() || !s.peer_cpus.empty()))
        throw spec_error("'cpus' (both sides, the older form) and 'initiator_cpus'/'peer_cpus' both pin the threads: give one form");
    if (s.tx_depth == 0 || s.tx_depth > 8192) throw spec_error(fmt::format("tx-depth {} is out of range: use 1..8192", s.tx_depth));
    if (s.rdma_port == 0 || s.rdma_port > 255) throw spec_error(fmt::format("RDMA port {} is out of range: use 1..255", s.rdma_port));
    if (s.gid_index && (*s.gid_index < 0 || *s.gid_index > 1023))
        throw spec_error(fmt::format("GID index {} is out of range: use 0..1023", *s.gid_index));
    if (!carries_field(s, "ofi_provider") && (!s.ofi_provider.empty() || s.ofi_op != ofi_op::tagged))
        throw spec_error("ofi_provider and ofi_op are for transport ofi: drop them or give --transport ofi");
    if (s.ofi_provider.size() > 64 || std::any_of(s.ofi_provider.begin(), s.ofi_provider.end(), [](char c) {
            return !(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == ';');
        }))
        throw spec_error("ofi_provider must be a libfabric provider name such as efa, cxi, verbs, tcp or shm (`fi_info -l` "
                         "lists them)");
    check_side_memory(s, true);
    check_side_memory(s, false);
    if (rules.check_memory) rules.check_memory(s);
}

json to_json(const run_spec& s) {
    json j;
    j["peer"] = s.peer;
    j["transport"] = s.transport;
    j["tests"] = json::array();
    for (auto t : s.tests) j["tests"].push_back(to_string(t));
    j["sizes"] = s.sizes;
    j["streams"] = s.streams;
    j["reverse"] = s.reverse;
    j["iterations"] = s.iterations ? json(*s.iterations) : json(nullptr);
    j["duration_s"] = s.duration_s ? json(*s.duration_s) : json(nullptr);
    j["precision"] = s.precision;
    j["max_point_s"] = s.max_point_s;
    j["warmup_s"] = s.warmup_s;
    j["verify"] = s.verify;
    j["busy_poll"] = s.busy_poll;
    j["window_bytes"] = s.window_bytes ? json(*s.window_bytes) : json(nullptr);
    j["cpus"] = s.cpus;
    // Only when given, so that a peer older than these fields, which refuses unknown ones,
    // still takes a spec that does not use them.
    if (!s.initiator_cpus.empty()) j["initiator_cpus"] = s.initiator_cpus;
    if (!s.peer_cpus.empty()) j["peer_cpus"] = s.peer_cpus;
    j["op"] = to_string(s.op);
    j["tx_depth"] = s.tx_depth;
    j["rdma_device"] = s.rdma_device;
    j["rdma_port"] = s.rdma_port;
    j["gid_index"] = s.gid_index ? json(*s.gid_index) : json(nullptr);
    if (carries_field(s, "ofi_provider")) {  // only for it: specs of the other transports read as before
        j["ofi_provider"] = s.ofi_provider;
        j["ofi_op"] = to_string(s.ofi_op);
    }
    if (!s.rails.empty()) {  // only when given: a peer older than rails refuses the field
        j["rails"] = json::array();
        for (const auto& r : s.rails) j["rails"].push_back(to_json(r));
    }
    j["local_memory"] = s.local_memory;
    j["remote_memory"] = s.remote_memory;
    return j;
}

namespace {

const char* type_name(const json& v) { return v.type_name(); }

std::string get_string(const json& v, std::string_view key) {
    if (!v.is_string()) throw spec_error(fmt::format("field '{}' must be a string, not {}", key, type_name(v)));
    return v.get<std::string>();
}
bool get_bool(const json& v, std::string_view key) {
    if (!v.is_boolean()) throw spec_error(fmt::format("field '{}' must be true or false, not {}", key, type_name(v)));
    return v.get<bool>();
}
std::uint64_t get_uint(const json& v, std::string_view key) {
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
        throw spec_error(fmt::format("field '{}' must be a non-negative integer, not {}", key, v.dump()));
    return v.get<std::uint64_t>();
}
std::uint32_t get_u32(const json& v, std::string_view key) {
    const auto x = get_uint(v, key);
    if (x > 0xffffffffull) throw spec_error(fmt::format("field '{}' is too large", key));
    return static_cast<std::uint32_t>(x);
}
double get_double(const json& v, std::string_view key) {
    if (!v.is_number()) throw spec_error(fmt::format("field '{}' must be a number, not {}", key, type_name(v)));
    return v.get<double>();
}

std::vector<int> get_cpu_list(const json& v, std::string_view key) {
    if (v.is_string()) return parse_cpu_list(v.get<std::string>());
    if (!v.is_array())
        throw spec_error(fmt::format("field '{}' must be an array of CPU numbers or a string like \"0,2-3\"", key));
    std::vector<int> out;
    for (const auto& c : v) {
        const auto n = get_uint(c, fmt::format("{}[]", key));
        if (n > 65535) throw spec_error(fmt::format("field '{}': CPU {} is out of range", key, n));
        out.push_back(static_cast<int>(n));
    }
    return out;
}

}  // namespace

run_spec run_spec_from_json(const json& j, const run_limits& lim) {
    if (!j.is_object()) throw spec_error(fmt::format("a run spec must be a JSON object, not {}", type_name(j)));
    static const std::set<std::string, std::less<>> known = {
        "peer", "transport", "tests", "sizes", "streams", "reverse", "iterations", "duration_s",
        "precision", "max_point_s", "warmup_s", "verify", "busy_poll", "window_bytes", "cpus", "initiator_cpus", "peer_cpus", "op",
        "tx_depth", "rdma_device", "rdma_port", "gid_index", "local_memory", "remote_memory", "rails", "ofi_provider", "ofi_op"};
    for (const auto& [key, value] : j.items())
        if (!known.contains(key)) throw spec_error(fmt::format("unknown field '{}' in run spec", key));
    if (!j.contains("peer")) throw spec_error("run spec has no 'peer': give the peer daemon as \"host:port\"");

    run_spec s;
    s.sizes.clear();
    for (const auto& [key, v] : j.items()) {
        if (key == "peer") s.peer = get_string(v, key);
        else if (key == "transport") s.transport = transport_rules_of(get_string(v, key)).name;
        else if (key == "tests") {
            if (v.is_string()) s.tests = parse_test_list(v.get<std::string>());
            else if (v.is_array()) {
                s.tests.clear();
                for (const auto& t : v) {
                    const auto k = parse_test_kind(get_string(t, "tests[]"));
                    if (std::find(s.tests.begin(), s.tests.end(), k) == s.tests.end()) s.tests.push_back(k);
                }
            } else throw spec_error("field 'tests' must be an array of test names or a string like \"latency,bandwidth\"");
        } else if (key == "sizes") {
            // Measured as sent or refused (400): the API never reorders silently (docs/api.md).
            size_list list;
            if (v.is_string()) list = parse_size_list_as_written(v.get<std::string>());
            else if (v.is_array()) {
                std::vector<std::uint64_t> as_sent;
                for (const auto& x : v) as_sent.push_back(get_uint(x, "sizes[]"));
                list = make_size_list(std::move(as_sent));
            } else throw spec_error("field 'sizes' must be an array of byte counts or a string like \"1..4M\"");
            require_ascending("sizes", list);
            s.sizes = std::move(list.sizes);
        } else if (key == "streams") s.streams = get_u32(v, key);
        else if (key == "reverse") s.reverse = get_bool(v, key);
        else if (key == "iterations") { if (!v.is_null()) s.iterations = get_uint(v, key); }
        else if (key == "duration_s") { if (!v.is_null()) s.duration_s = get_double(v, key); }
        else if (key == "precision") s.precision = get_double(v, key);
        else if (key == "max_point_s") s.max_point_s = get_double(v, key);
        else if (key == "warmup_s") s.warmup_s = get_double(v, key);
        else if (key == "verify") s.verify = get_bool(v, key);
        else if (key == "busy_poll") s.busy_poll = get_bool(v, key);
        else if (key == "window_bytes") { if (!v.is_null()) s.window_bytes = get_uint(v, key); }
        else if (key == "cpus") s.cpus = get_cpu_list(v, key);
        else if (key == "initiator_cpus") s.initiator_cpus = get_cpu_list(v, key);
        else if (key == "peer_cpus") s.peer_cpus = get_cpu_list(v, key);
        else if (key == "op") s.op = parse_rdma_op(get_string(v, key));
        else if (key == "tx_depth") s.tx_depth = get_u32(v, key);
        else if (key == "rdma_device") s.rdma_device = get_string(v, key);
        else if (key == "rdma_port") s.rdma_port = get_u32(v, key);
        else if (key == "gid_index") { if (!v.is_null()) s.gid_index = static_cast<int>(get_u32(v, key)); }
        else if (key == "ofi_provider") s.ofi_provider = get_string(v, key);
        else if (key == "ofi_op") s.ofi_op = parse_ofi_op(get_string(v, key));
        else if (key == "local_memory") s.local_memory = get_string(v, key);
        else if (key == "remote_memory") s.remote_memory = get_string(v, key);
        else if (key == "rails") {
            if (!v.is_array()) throw spec_error("field 'rails' must be an array of rails");
            if (v.size() > max_rails)  // before parsing them: a huge list is refused, not built
                throw spec_error(fmt::format("{} rails in one run: at most {} (select fewer with --rails NAME,...)", v.size(), max_rails));
            for (const auto& r : v) s.rails.push_back(rail_pair_from_json(r));
        }
    }
    if (!j.contains("sizes")) s.sizes = parse_size_list("1..4M");
    validate(s, lim);
    return s;
}

}  // namespace meshperf::core
