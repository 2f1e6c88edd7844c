#include "transport/link_counters_reader.hpp"

#include "core/netdev_name.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <mutex>
#include <set>
#include <system_error>
#include <utility>

namespace meshperf::transport {

namespace fs = std::filesystem;

namespace {

/// One unsigned decimal number and a newline at most; empty otherwise.
std::optional<std::uint64_t> read_number(const fs::path& file) {
    std::ifstream in(file);
    if (!in) return std::nullopt;
    std::string text;
    if (!std::getline(in, text)) return std::nullopt;
    std::uint64_t value = 0;
    const auto* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || ptr == text.data() || ptr != end) return std::nullopt;
    return value;
}

/// Whether `dir` was named as unreadable before, in this process; notes it now.
bool first_time_unreadable(const std::string& dir) {
    static std::mutex m;
    static std::set<std::string> seen;
    std::lock_guard lock(m);
    return seen.insert(dir).second;
}

}  // namespace

std::optional<core::counter_values> read_counter_directory(const fs::path& dir) {
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    if (ec) return std::nullopt;
    core::counter_values out;
    for (const auto& entry : it) {
        std::error_code type_ec;
        if (!entry.is_regular_file(type_ec)) continue;
        if (const auto v = read_number(entry.path())) out[entry.path().filename().string()] = *v;
    }
    return out;
}

link_counter_probe::link_counter_probe(fs::path sysfs_root, link_counter_target target)
    : root_(std::move(sysfs_root)), target_(std::move(target)) {}

std::optional<core::counter_values> link_counter_probe::read_noting(const fs::path& dir) {
    auto values = read_counter_directory(dir);
    if (!values && first_time_unreadable(dir.string())) unreadable_.push_back(dir.string());
    return values;
}

link_counter_probe::reading link_counter_probe::read_now() {
    reading r;
    // Names may come from a run spec: one Linux would not give (a '/', "..") reads nothing,
    // so no name leaves its sysfs directory.
    if (!target_.interface.empty() && core::valid_netdev_name(target_.interface)) {
        const auto netdev = root_ / "class" / "net" / target_.interface;
        r.nic = read_noting(netdev / "statistics");
        if (r.nic)
            if (const auto flaps = read_number(netdev / "carrier_changes")) (*r.nic)["carrier_changes"] = *flaps;
    }
    if (!target_.rdma_device.empty() && core::valid_netdev_name(target_.rdma_device)) {
        const auto port = root_ / "class" / "infiniband" / target_.rdma_device / "ports" / std::to_string(target_.rdma_port);
        r.port = read_noting(port / "counters");
        r.hw = read_noting(port / "hw_counters");
    }
    r.at = std::chrono::steady_clock::now();
    return r;
}

void link_counter_probe::read_before() {
    before_ = read_now();
    intervals_ = {};
    if (before_->nic) intervals_.nic.start(*before_->nic);
    if (before_->port) intervals_.port.start(*before_->port);
    if (before_->hw) intervals_.hw.start(*before_->hw);
}

void link_counter_probe::follow(const reading& r) {
    const double at_s = std::chrono::duration<double>(r.at - before_->at).count();
    if (r.nic) intervals_.nic.add(*r.nic, at_s);
    if (r.port) intervals_.port.add(*r.port, at_s);
    if (r.hw) intervals_.hw.add(*r.hw, at_s);
}

void link_counter_probe::read_interval() {
    if (before_) follow(read_now());
}

void link_counter_probe::read_after() {
    after_ = read_now();
    if (before_) follow(*after_);
}

std::optional<core::link_side_counters> link_counter_probe::counters() const {
    if (!before_ || !after_) return std::nullopt;
    core::link_side_counters c;
    c.window_s = std::chrono::duration<double>(after_->at - before_->at).count();
    // Read inside the window too: the spread is worth keeping from the second interval on
    // (one interval is the delta itself).
    const auto split = std::max({intervals_.nic.intervals(), intervals_.port.intervals(), intervals_.hw.intervals()});
    const auto spread = [&](const core::counter_interval_tracker& t, core::counter_group_delta& g) {
        if (split >= 2) t.apply(g);
    };
    if (split >= 2) c.intervals = split;
    if (before_->nic && after_->nic) {
        c.nic = core::nic_counters{target_.interface, core::counter_delta(*before_->nic, *after_->nic)};
        spread(intervals_.nic, c.nic->counters);
    }
    const bool port_read = before_->port && after_->port;
    const bool hw_read = before_->hw && after_->hw;
    if (port_read || hw_read) {
        core::rdma_port_counters p;
        p.device = target_.rdma_device;
        p.port = target_.rdma_port;
        if (port_read) {
            p.counters = core::counter_delta(*before_->port, *after_->port, core::ib_counter_maximum);
            spread(intervals_.port, p.counters);
        }
        if (hw_read) {
            p.hw_counters = core::counter_delta(*before_->hw, *after_->hw);
            spread(intervals_.hw, p.hw_counters);
        }
        c.rdma = std::move(p);
    }
    if (!c.nic && !c.rdma) return std::nullopt;
    return c;
}

std::vector<std::string> link_counter_probe::take_unreadable() { return std::exchange(unreadable_, {}); }

}  // namespace meshperf::transport
