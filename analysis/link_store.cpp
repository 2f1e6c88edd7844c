#include "analysis/link_store.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <limits>

namespace meshperf::analysis {

namespace {

constexpr std::uint64_t packed_bit = std::uint64_t{1} << 63;
constexpr std::uint8_t ids_in_detail = 0xff;  // id_count: the side table holds the ids
constexpr double absent = std::numeric_limits<double>::quiet_NaN();

std::optional<double> figure(double v) { return std::isnan(v) ? std::nullopt : std::optional<double>(v); }

bool digits(const std::string& s, std::size_t at, std::size_t n) {
    for (std::size_t i = at; i < at + n; ++i)
        if (s[i] < '0' || s[i] > '9') return false;
    return true;
}

int number(const std::string& s, std::size_t at, std::size_t n) { return std::stoi(s.substr(at, n)); }

}  // namespace

std::uint64_t pack_run_id(const std::string& id) {
    // r-YYYYMMDD-HHMMSS-xxxxxx
    if (id.size() != 24 || id.compare(0, 2, "r-") != 0 || id[10] != '-' || id[17] != '-' || !digits(id, 2, 8) ||
        !digits(id, 11, 6))
        return 0;
    for (std::size_t i = 18; i < 24; ++i)
        if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f'))) return 0;
    std::tm t{};
    t.tm_year = number(id, 2, 4) - 1900;
    t.tm_mon = number(id, 6, 2) - 1;
    t.tm_mday = number(id, 8, 2);
    t.tm_hour = number(id, 11, 2);
    t.tm_min = number(id, 13, 2);
    t.tm_sec = number(id, 15, 2);
    const std::time_t when = ::timegm(&t);
    if (when < 0 || static_cast<std::uint64_t>(when) >= (std::uint64_t{1} << 38)) return 0;
    const std::uint64_t packed = packed_bit | static_cast<std::uint64_t>(when) << 24 | std::stoul(id.substr(18), nullptr, 16);
    return unpack_run_id(packed) == id ? packed : 0;  // only what reads back the same (no 30 February)
}

std::string unpack_run_id(std::uint64_t packed) {
    if (!(packed & packed_bit)) return {};
    const auto when = static_cast<std::time_t>((packed & ~packed_bit) >> 24);
    return fmt::format("r-{:%Y%m%d-%H%M%S}-{:06x}", fmt::gmtime(when), packed & 0xffffff);
}

link_store::link_store(std::size_t host_count) : host_count_(host_count), index_(host_count) {}

link_store::detail& link_store::detail_of(link_record& r) {
    if (!r.detail) {
        details_.emplace_back();
        r.detail = static_cast<std::uint32_t>(details_.size());
    }
    return details_[r.detail - 1];
}

link_record link_store::make_record(const link_sample& s, std::span<const std::string> run_ids) {
    link_record r;
    r.from = static_cast<std::uint32_t>(s.from);
    r.to = static_cast<std::uint32_t>(s.to);
    r.gbit_per_s = s.gbit_per_s.value_or(absent);
    r.lat_us = s.lat_us.value_or(absent);
    r.reachable = s.reachable;
    bool packed = run_ids.size() <= 2;
    for (std::size_t i = 0; packed && i < run_ids.size(); ++i) {
        r.run_ids[i] = pack_run_id(run_ids[i]);
        packed = r.run_ids[i] != 0;
    }
    if (packed) {
        r.id_count = static_cast<std::uint8_t>(run_ids.size());
    } else {
        r.run_ids[0] = r.run_ids[1] = 0;
        r.id_count = ids_in_detail;
        detail_of(r).run_ids.assign(run_ids.begin(), run_ids.end());
    }
    if (!s.error.empty() || !s.counter_problems.empty() || !s.rail_problems.empty()) {
        auto& d = detail_of(r);
        d.error = s.error;
        d.counter_problems = s.counter_problems;
        d.rail_problems = s.rail_problems;
    }
    return r;
}

bool link_store::put(const link_sample& s, std::span<const std::string> run_ids, bool retest) {
    auto& row = index_.at(s.from);
    const auto to = static_cast<std::uint32_t>(s.to);
    auto at = std::lower_bound(row.begin(), row.end(), to, [](const auto& e, std::uint32_t t) { return e.first < t; });
    if (at == row.end() || at->first != to) {
        row.insert(at, {to, static_cast<std::uint32_t>(records_.size())});
        records_.push_back(make_record(s, run_ids));
        return true;
    }
    if (!retest) return false;
    const std::size_t i = at->second;
    auto before = sample(i);
    auto ids = this->run_ids(i);
    ids.insert(ids.end(), run_ids.begin(), run_ids.end());
    // The old side entry is left behind (a retest is rare: a bad link's); the new one holds
    // the retest's details and the first figures.
    records_[i] = make_record(s, ids);
    records_[i].retested = true;
    detail_of(records_[i]).first = std::move(before);
    return true;
}

std::size_t link_store::reachable() const {
    std::size_t k = 0;
    for (const auto& r : records_) k += r.reachable;
    return k;
}

link_sample link_store::sample(std::size_t i) const {
    const auto& r = records_[i];
    link_sample s;
    s.from = r.from;
    s.to = r.to;
    s.reachable = r.reachable;
    s.gbit_per_s = figure(r.gbit_per_s);
    s.lat_us = figure(r.lat_us);
    if (r.detail) {
        const auto& d = details_[r.detail - 1];
        s.error = d.error;
        s.counter_problems = d.counter_problems;
        s.rail_problems = d.rail_problems;
    }
    return s;
}

std::optional<link_sample> link_store::first(std::size_t i) const {
    const auto& r = records_[i];
    if (!r.retested || !r.detail) return std::nullopt;
    return details_[r.detail - 1].first;
}

std::vector<std::string> link_store::run_ids(std::size_t i) const {
    const auto& r = records_[i];
    if (r.id_count == ids_in_detail) return details_[r.detail - 1].run_ids;
    std::vector<std::string> ids;
    for (std::size_t k = 0; k < r.id_count; ++k) ids.push_back(unpack_run_id(r.run_ids[k]));
    return ids;
}

link_source link_store::source() const {
    return {records_.size(), [this](std::size_t i) { return sample(i); }};
}

std::size_t link_store::bytes() const {
    std::size_t b = records_.capacity() * sizeof(link_record) + index_.capacity() * sizeof(index_[0]) +
                    details_.capacity() * sizeof(detail);
    for (const auto& row : index_) b += row.capacity() * sizeof(row[0]);
    for (const auto& d : details_) {
        b += d.error.capacity();
        for (const auto* v : {&d.counter_problems, &d.rail_problems, &d.run_ids})
            for (const auto& s : *v) b += sizeof(s) + s.capacity();
    }
    return b;
}

}  // namespace meshperf::analysis
