#include "transport/link_counters_reader.hpp"

#include "core/counter_sources.hpp"
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

namespace {

/// The source's root under the sysfs root: its kind's pattern with the device and port.
fs::path source_root(const fs::path& sysfs, const core::counter_source_kind& kind, const counter_source_target& t) {
    std::string rel(kind.root);
    for (const auto& [key, value] : {std::pair<std::string, std::string>{"{device}", t.device}, {"{port}", std::to_string(t.port)}})
        if (const auto at = rel.find(key); at != std::string::npos) rel.replace(at, key.size(), value);
    return sysfs / rel;
}

}  // namespace

void link_counter_target::count(std::string_view kind, std::string device, unsigned port) {
    const auto& kinds = core::counter_source_kinds();
    const auto rank = [&](std::string_view k) {
        return std::find_if(kinds.begin(), kinds.end(), [&](const auto& x) { return x.key == k; }) - kinds.begin();
    };
    if (rank(kind) == static_cast<std::ptrdiff_t>(kinds.size())) return;
    std::erase_if(sources, [&](const auto& s) { return s.kind == kind; });
    if (device.empty()) return;
    const auto at = std::find_if(sources.begin(), sources.end(), [&](const auto& s) { return rank(s.kind) > rank(kind); });
    sources.insert(at, {std::string(kind), std::move(device), port});
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
    for (const auto& t : target_.sources) {
        const auto* kind = core::find_counter_source_kind(t.kind);
        auto& groups = r.groups.emplace_back(kind ? kind->groups.size() : 0);
        // Names may come from a run spec: one Linux would not give (a '/', "..") reads nothing,
        // so no name leaves its sysfs directory.
        if (!kind || !core::valid_netdev_name(t.device)) continue;
        const auto root = source_root(root_, *kind, t);
        for (std::size_t g = 0; g < groups.size(); ++g) {
            groups[g] = read_noting(root / kind->groups[g].dir);
            if (groups[g])
                for (const auto& file : kind->groups[g].extra_files)
                    if (const auto v = read_number(root / file)) (*groups[g])[std::string(file)] = *v;
        }
    }
    r.at = std::chrono::steady_clock::now();
    return r;
}

void link_counter_probe::read_before() {
    before_ = read_now();
    intervals_.clear();
    for (const auto& groups : before_->groups) {
        auto& trackers = intervals_.emplace_back(groups.size());
        for (std::size_t g = 0; g < groups.size(); ++g)
            if (groups[g]) trackers[g].start(*groups[g]);
    }
}

void link_counter_probe::follow(const reading& r) {
    const double at_s = std::chrono::duration<double>(r.at - before_->at).count();
    for (std::size_t s = 0; s < r.groups.size() && s < intervals_.size(); ++s)
        for (std::size_t g = 0; g < r.groups[s].size() && g < intervals_[s].size(); ++g)
            if (r.groups[s][g]) intervals_[s][g].add(*r.groups[s][g], at_s);
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
    std::uint64_t split = 0;
    for (const auto& trackers : intervals_)
        for (const auto& t : trackers) split = std::max<std::uint64_t>(split, t.intervals());
    if (split >= 2) c.intervals = split;
    for (std::size_t s = 0; s < target_.sources.size(); ++s) {
        const auto& t = target_.sources[s];
        const auto* kind = core::find_counter_source_kind(t.kind);
        if (!kind) continue;
        auto source = core::empty_counter_source(t.kind, t.device, t.port);
        bool read = false;
        for (std::size_t g = 0; g < kind->groups.size(); ++g) {
            const auto& before = before_->groups[s][g];
            const auto& after = after_->groups[s][g];
            if (!before || !after) continue;
            read = true;
            source.groups[g] = core::counter_delta(*before, *after, kind->groups[g].maximum);
            if (split >= 2) intervals_[s][g].apply(source.groups[g]);
        }
        if (read) c.sources.push_back(std::move(source));
    }
    if (c.sources.empty()) return std::nullopt;
    return c;
}

std::vector<std::string> link_counter_probe::take_unreadable() { return std::exchange(unreadable_, {}); }

}  // namespace meshperf::transport
