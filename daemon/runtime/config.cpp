#include "daemon/runtime/config.hpp"

#include "core/transport_rules.hpp"
#include "core/error.hpp"
#include "core/toml_nesting.hpp"
#include "core/sizes.hpp"
#include "node/inventory.hpp"
#include "transport/socket.hpp"
#include "transport/small_file.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cpptoml.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>

namespace meshperf::daemon {

namespace {

using core::spec_error;
using base_ptr = std::shared_ptr<cpptoml::base>;

const std::map<std::string, std::vector<std::string>, std::less<>>& known_keys() {
    static const std::map<std::string, std::vector<std::string>, std::less<>> keys{
        {"daemon", {"listen", "state_dir", "token_file"}},
        {"auth", {"metrics_require_token", "failed_auth_free_attempts", "failed_auth_first_delay", "failed_auth_max_delay"}},
        {"limits", {"max_streams", "max_qps", "max_iterations", "max_point_duration", "max_run_duration", "max_bytes_per_point",
                    "max_queued_runs", "max_connections", "allowed_peer_cidrs", "initiator_silence", "metrics_max_peers"}},
        {"store", {"max_runs", "max_age_days", "max_bytes", "integrity_check", "max_pending", "retry_interval"}},
        {"schedule", {"peers", "transports", "tests", "memory", "sizes", "interval", "jitter", "point_duration"}},
        {"rails", {"include", "exclude"}},
        {"inspect", {"interval", "jitter", "loopback", "manifest"}},
    };
    return keys;
}

std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
    return out;
}

std::string type_name(const base_ptr& v) {
    if (v->is_table()) return "a table";
    if (v->is_table_array()) return "an array of tables";
    if (v->is_array()) return "an array";
    if (v->as<std::string>()) return "a string";
    if (v->as<bool>()) return "a boolean";
    if (v->as<std::int64_t>()) return "an integer";
    if (v->as<double>()) return "a number";
    return "a date or time";
}

/// "64G", "1.5T", "512 MiB", "4096": a byte amount, read by core/sizes as the CLI and the
/// API read sizes ("64GB" and "64Gb" are refused there as ambiguous). Nullopt when it is not one.
std::optional<std::uint64_t> parse_byte_amount(std::string_view text) {
    try {
        return core::parse_byte_count(text, ~std::uint64_t{0});
    } catch (const core::spec_error&) {
        return std::nullopt;
    }
}

/// Reads the keys of one table, with messages that name the file, the table and the key.
class table_reader {
public:
    table_reader(const std::string& origin, std::string name, std::shared_ptr<cpptoml::table> t)
        : origin_(origin), name_(std::move(name)), table_(std::move(t)) {}

    [[noreturn]] void fail(std::string_view key, const std::string& what) const {
        throw spec_error(fmt::format("{}: [{}] {}: {}", origin_, name_, key, what));
    }

    base_ptr get(std::string_view key) const {
        const std::string k(key);
        return table_ && table_->contains(k) ? table_->get(k) : nullptr;  // get() throws for an absent key
    }

    std::optional<std::string> string(std::string_view key) const {
        const auto v = get(key);
        if (!v) return std::nullopt;
        if (auto s = v->as<std::string>()) return s->get();
        fail(key, fmt::format("must be a string, not {}", type_name(v)));
    }

    std::optional<bool> boolean(std::string_view key) const {
        const auto v = get(key);
        if (!v) return std::nullopt;
        if (auto b = v->as<bool>()) return b->get();
        fail(key, fmt::format("must be true or false, not {}", type_name(v)));
    }

    std::optional<std::int64_t> integer(std::string_view key, std::int64_t min, std::int64_t max) const {
        const auto v = get(key);
        if (!v) return std::nullopt;
        const auto i = v->as<std::int64_t>();
        if (!i) fail(key, fmt::format("must be an integer, not {}", type_name(v)));
        if (i->get() < min || i->get() > max) fail(key, fmt::format("must be {} to {}, not {}", min, max, i->get()));
        return i->get();
    }

    /// A byte count: an integer, or a string with an IEC suffix ("64G", "1T", "512M").
    std::optional<std::uint64_t> size(std::string_view key, std::uint64_t min, std::uint64_t max) const {
        const auto v = get(key);
        if (!v) return std::nullopt;
        std::uint64_t bytes = 0;
        if (auto text = v->as<std::string>()) {
            const auto b = parse_byte_amount(text->get());
            if (!b) fail(key, fmt::format("\"{}\" is not a size: write a number and an IEC unit, e.g. \"512M\", \"64G\", \"1T\"", text->get()));
            bytes = *b;
        } else if (auto i = v->as<std::int64_t>()) {
            if (i->get() < 0) fail(key, fmt::format("must be a size of at least {}, not {}", core::format_size(min), i->get()));
            bytes = static_cast<std::uint64_t>(i->get());
        } else {
            fail(key, fmt::format("must be a size such as \"64G\" or a number of bytes, not {}", type_name(v)));
        }
        if (bytes < min || bytes > max)
            fail(key, fmt::format("must be {} to {}, not {}", core::format_size(min), core::format_size(max), core::format_size(bytes)));
        return bytes;
    }

    /// A duration: "2s", "250ms", "15m", "1h", or a number of seconds.
    std::optional<double> duration(std::string_view key, double min_s, double max_s) const {
        const auto v = get(key);
        if (!v) return std::nullopt;
        double s = 0;
        if (auto text = v->as<std::string>()) {
            try {
                s = parse_duration_s(text->get(), "");
            } catch (const spec_error& e) {
                fail(key, e.what());
            }
        } else if (auto n = v->as<double>()) {
            s = n->get();
        } else {
            fail(key, fmt::format("must be a duration such as \"2s\", \"15m\" or a number of seconds, not {}", type_name(v)));
        }
        if (!std::isfinite(s) || s < min_s || s > max_s)
            fail(key, fmt::format("must be {} s to {} s, not {} s", min_s, max_s, s));
        return s;
    }

    /// An array of strings; a single string is taken as a comma-separated list when
    /// `comma_string` is set. Integers are accepted as their decimal text when `integers` is set.
    std::optional<std::vector<std::string>> strings(std::string_view key, bool comma_string, bool integers) const {
        const auto v = get(key);
        if (!v) return std::nullopt;
        std::vector<std::string> out;
        if (auto s = v->as<std::string>(); s && comma_string) {
            std::string item;
            std::istringstream in(s->get());
            while (std::getline(in, item, ','))
                if (item.find_first_not_of(' ') != std::string::npos) out.push_back(item.substr(item.find_first_not_of(' ')));
            return out;
        }
        if (!v->is_array()) fail(key, fmt::format("must be an array of strings, not {}", type_name(v)));
        for (const auto& e : *v->as_array()) {
            if (auto s = e->as<std::string>()) out.push_back(s->get());
            else if (auto i = e->as<std::int64_t>(); i && integers) out.push_back(std::to_string(i->get()));
            else fail(key, fmt::format("must be an array of strings, but holds {}", type_name(e)));
        }
        return out;
    }

private:
    const std::string& origin_;
    std::string name_;
    std::shared_ptr<cpptoml::table> table_;
};

void check_known(const std::string& origin, const cpptoml::table& root) {
    const auto& known = known_keys();
    std::vector<std::string> problems;
    std::vector<std::string> tables;
    for (const auto& [name, _] : known) tables.push_back("[" + name + "]");
    // Sorted, so the message does not depend on hash order.
    std::map<std::string, base_ptr> sorted_root(root.begin(), root.end());
    for (const auto& [name, value] : sorted_root) {
        const auto it = known.find(name);
        if (it == known.end() || !value->is_table()) {
            problems.push_back(value->is_table() ? fmt::format("unknown table [{}] (known: {})", name, join(tables))
                                                 : fmt::format("unknown key '{}' outside any table (keys belong in {})", name, join(tables)));
            continue;
        }
        const auto t = value->as_table();
        std::map<std::string, base_ptr> sorted(t->begin(), t->end());
        for (const auto& [key, _] : sorted)
            if (std::find(it->second.begin(), it->second.end(), key) == it->second.end())
                problems.push_back(fmt::format("unknown key '{}' in [{}] (known: {})", key, name, join(it->second)));
    }
    if (problems.empty()) return;
    std::string msg = fmt::format("{}: ", origin);
    for (std::size_t i = 0; i < problems.size(); ++i) msg += (i ? "; " : "") + problems[i];
    throw spec_error(msg);
}

std::shared_ptr<cpptoml::table> sub_table(const cpptoml::table& root, const std::string& name) {
    return root.contains(name) ? root.get_table(name) : nullptr;
}

/// [rails] include / exclude: arrays of shell globs matched against netdev and RDMA device names.
void read_rails(const table_reader& t, daemon_config& c) {
    for (const auto* key : {"include", "exclude"}) {
        const auto patterns = t.strings(key, false, false);
        if (!patterns) continue;
        for (const auto& p : *patterns)
            if (const auto why = node::rail_pattern_problem(p); !why.empty()) t.fail(key, why);
        (std::string_view(key) == "include" ? c.rails.include : c.rails.exclude) = *patterns;
    }
}

void read_schedule(const std::string& origin, const table_reader& t, daemon_config& c) {
    probe_config& p = c.schedule;
    if (auto peers = t.strings("peers", false, false)) {
        p.peers.clear();
        for (const auto& peer : *peers) {
            std::string normal;
            try {
                normal = transport::parse_endpoint(peer).to_string();
            } catch (const spec_error& e) {
                t.fail("peers", e.what());
            }
            if (std::find(p.peers.begin(), p.peers.end(), normal) == p.peers.end()) p.peers.push_back(normal);
        }
    }
    if (auto transports = t.strings("transports", true, false)) {
        p.transports.clear();
        for (const auto& name : *transports) {
            try {
                const std::string k(core::transport_rules_of(name).name);
                if (std::find(p.transports.begin(), p.transports.end(), k) == p.transports.end()) p.transports.push_back(k);
            } catch (const spec_error& e) {
                t.fail("transports", e.what());
            }
        }
        if (p.transports.empty()) {
            std::vector<std::string> names;
            for (const auto& r : core::transport_rule_table()) names.push_back(fmt::format("\"{}\"", r.name));
            t.fail("transports", fmt::format("must name at least one transport ({})", fmt::join(names, ", ")));
        }
    }
    if (auto tests = t.strings("tests", true, false)) {
        try {
            std::string list;
            for (const auto& s : *tests) list += (list.empty() ? "" : ",") + s;
            p.tests = core::parse_test_list(list);
        } catch (const spec_error& e) {
            t.fail("tests", e.what());
        }
        if (p.tests.empty()) t.fail("tests", "must name at least one test (\"latency\", \"bandwidth\", \"bidir\")");
    }
    if (auto memory = t.string("memory")) p.memory = *memory;
    if (auto sizes = t.strings("sizes", true, true)) {
        try {
            std::string list;
            for (const auto& s : *sizes) list += (list.empty() ? "" : ",") + s;
            p.sizes = core::parse_size_list(list);
        } catch (const spec_error& e) {
            t.fail("sizes", e.what());
        }
    }
    if (auto v = t.duration("interval", 1, 7 * 86400)) p.interval_s = *v;
    if (auto v = t.duration("jitter", 0, 7 * 86400)) p.jitter_s = *v;
    if (p.jitter_s >= p.interval_s)
        t.fail("jitter", fmt::format("must be shorter than the interval ({} s), not {} s", p.interval_s, p.jitter_s));
    if (auto v = t.duration("point_duration", 0.01, c.limits.max_duration_s)) p.point_duration_s = *v;
    // Every probe must be a run this daemon accepts: find out now, not at 3 a.m.
    for (const auto& peer : p.peers)
        for (auto transport : p.transports) {
            core::run_spec s;
            s.peer = peer;
            s.transport = transport;
            s.tests = p.tests;
            s.sizes = p.sizes;
            s.local_memory = s.remote_memory = p.memory;
            s.max_point_s = p.point_duration_s;
            try {
                core::validate(s, c.limits);
            } catch (const spec_error& e) {
                throw spec_error(fmt::format("{}: [schedule]: the probe of {} over {} would be refused: {}", origin, peer,
                                             transport, e.what()));
            }
        }
}

/// [inspect]: interval 0 turns the schedule off; the manifest is only named here (main.cpp
/// reads it at start, so an unreadable one is a start error too).
void read_inspect(const table_reader& t, daemon_config& c) {
    inspect_config& i = c.inspect;
    if (auto v = t.duration("interval", 0, 7 * 86400)) {
        if (*v > 0 && *v < 1) t.fail("interval", fmt::format("must be 0 (no scheduled inspection) or at least 1 s, not {} s", *v));
        i.interval_s = *v;
    }
    if (auto v = t.duration("jitter", 0, 86400)) i.jitter_s = *v;
    if (i.enabled() && i.jitter_s >= i.interval_s)
        t.fail("jitter", fmt::format("must be shorter than the interval ({} s), not {} s", i.interval_s, i.jitter_s));
    if (auto v = t.boolean("loopback")) i.loopback = *v;
    if (auto v = t.string("manifest")) {
        if (v->empty()) t.fail("manifest", "is empty: remove the line to inspect without a manifest");
        i.manifest = *v;
    }
}

}  // namespace

double parse_duration_s(std::string_view text, std::string_view what) {
    const auto prefix = what.empty() ? std::string() : fmt::format("{}: ", what);
    std::string s(text);
    while (!s.empty() && s.back() == ' ') s.pop_back();
    while (!s.empty() && s.front() == ' ') s.erase(0, 1);
    double value = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || p == s.data())
        throw spec_error(fmt::format("{}\"{}\" is not a duration: write a number and a unit, e.g. \"250ms\", \"2s\", \"15m\", \"1h\"",
                                     prefix, text));
    std::string unit(p, static_cast<const char*>(s.data() + s.size()));
    while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
    double scale = 0;
    if (unit.empty() || unit == "s") scale = 1;
    else if (unit == "ms") scale = 1e-3;
    else if (unit == "m" || unit == "min") scale = 60;
    else if (unit == "h") scale = 3600;
    else
        throw spec_error(fmt::format("{}\"{}\": unknown unit '{}' (use ms, s, m or h)", prefix, text, unit));
    if (!std::isfinite(value) || value < 0)
        throw spec_error(fmt::format("{}\"{}\" must be a non-negative duration", prefix, text));
    return value * scale;
}

daemon_config parse_config(std::string_view text, const std::string& origin) {
    std::shared_ptr<cpptoml::table> root;
    core::check_toml_nesting(text, origin);  // cpptoml recurses: a deep file would overflow the stack
    try {
        std::istringstream in{std::string(text)};
        cpptoml::parser parser(in);
        root = parser.parse();
    } catch (const cpptoml::parse_exception& e) {
        throw spec_error(fmt::format("{}: not valid TOML: {}", origin, e.what()));
    }
    check_known(origin, *root);
    daemon_config c;

    const table_reader d(origin, "daemon", sub_table(*root, "daemon"));
    c.listen = d.string("listen");
    c.state_dir = d.string("state_dir");
    c.token_file = d.string("token_file");
    for (const auto* key : {"listen", "state_dir", "token_file"}) {
        const auto v = d.string(key);
        if (v && v->empty()) d.fail(key, "is empty: remove the line to keep the default");
    }
    if (c.listen) {
        try {
            transport::parse_endpoint(*c.listen);
        } catch (const spec_error& e) {
            d.fail("listen", e.what());
        }
    }

    const table_reader a(origin, "auth", sub_table(*root, "auth"));
    if (auto v = a.boolean("metrics_require_token")) c.metrics_require_token = *v;
    if (auto v = a.integer("failed_auth_free_attempts", 0, 1000)) c.auth_throttle.free_failures = static_cast<unsigned>(*v);
    const auto ms = [](double s) { return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(s * 1000))); };
    if (auto v = a.duration("failed_auth_first_delay", 0, 3600)) c.auth_throttle.first_delay = ms(*v);
    if (auto v = a.duration("failed_auth_max_delay", 0, 86400)) c.auth_throttle.max_delay = ms(*v);
    if (c.auth_throttle.max_delay < c.auth_throttle.first_delay)
        a.fail("failed_auth_max_delay", "must not be shorter than failed_auth_first_delay");

    const table_reader l(origin, "limits", sub_table(*root, "limits"));
    if (auto v = l.integer("max_streams", 1, 1024)) c.limits.max_streams = static_cast<std::uint32_t>(*v);
    if (auto v = l.integer("max_qps", 1, 1024)) c.limits.max_qps = static_cast<std::uint32_t>(*v);
    if (auto v = l.size("max_bytes_per_point", 4096, std::uint64_t{1} << 60)) c.limits.max_bytes_per_point = *v;
    if (auto v = l.integer("max_queued_runs", 1, 100'000)) c.limits.max_queued_runs = static_cast<std::uint32_t>(*v);
    if (auto v = l.integer("max_connections", 16, 1'000'000)) c.limits.max_connections = static_cast<std::uint32_t>(*v);
    if (auto v = l.integer("max_iterations", 1, std::int64_t{1} << 40)) c.limits.max_iterations = static_cast<std::uint64_t>(*v);
    if (auto v = l.duration("max_point_duration", 0.01, 86400)) c.limits.max_duration_s = *v;
    if (auto v = l.duration("max_run_duration", 0.01, 7 * 86400)) c.limits.max_run_s = *v;
    if (auto v = l.duration("initiator_silence", 2, 600)) c.limits.initiator_silence_s = *v;
    if (auto v = l.integer("metrics_max_peers", 1, 100'000)) c.metrics_max_peers = static_cast<std::size_t>(*v);
    if (c.limits.max_run_s < c.limits.max_duration_s)
        l.fail("max_run_duration", fmt::format("({} s) must not be shorter than max_point_duration ({} s)", c.limits.max_run_s,
                                               c.limits.max_duration_s));
    if (auto cidrs = l.strings("allowed_peer_cidrs", false, false)) {
        try {
            c.allowed_peers = cidr_list(*cidrs);
        } catch (const spec_error& e) {
            l.fail("allowed_peer_cidrs", e.what());
        }
    }

    const table_reader st(origin, "store", sub_table(*root, "store"));
    if (auto v = st.integer("max_runs", 0, 100'000'000)) c.store.max_runs = static_cast<std::size_t>(*v);
    if (auto v = st.integer("max_age_days", 0, 100'000)) c.store.max_age_days = static_cast<double>(*v);
    if (auto v = st.size("max_bytes", 0, std::uint64_t{1} << 50)) {
        if (*v != 0 && *v < (std::uint64_t{1} << 20)) st.fail("max_bytes", "must be 0 (no limit) or at least 1M");
        c.store.max_bytes = *v;
    }
    if (auto v = st.boolean("integrity_check")) c.store.integrity_check = *v;
    if (auto v = st.integer("max_pending", 1, 10'000)) c.store.max_pending = static_cast<std::size_t>(*v);
    if (auto v = st.duration("retry_interval", 0.1, 3600)) c.store.retry_interval_s = *v;

    read_schedule(origin, table_reader(origin, "schedule", sub_table(*root, "schedule")), c);
    read_rails(table_reader(origin, "rails", sub_table(*root, "rails")), c);
    read_inspect(table_reader(origin, "inspect", sub_table(*root, "inspect")), c);
    return c;
}

daemon_config load_config(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw spec_error(fmt::format("--config {}: no such file (create it from meshperfd.toml.example, or drop --config)", path));
    if (std::filesystem::is_directory(path, ec)) throw spec_error(fmt::format("--config {}: is a directory, not a file", path));
    return parse_config(transport::read_small_file(path, transport::max_config_file_bytes, "--config"), path);
}

}  // namespace meshperf::daemon
