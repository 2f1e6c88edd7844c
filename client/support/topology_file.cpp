#include "client/support/topology_file.hpp"

#include "client/support/daemon_client.hpp"
#include "core/error.hpp"
#include "transport/socket.hpp"
#include "transport/small_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <sstream>

namespace meshperf::client {

namespace {

/// The host as the matrix compares hosts: normalised HOST:PORT, or as written if it is no address.
std::string normal(const std::string& host) {
    try {
        return transport::parse_endpoint(host).to_string();
    } catch (const core::spec_error&) {
        return host;
    }
}

/// "a, b, c" of the first few, and how many more.
std::string first_few(const std::vector<std::string>& names) {
    constexpr std::size_t shown = 8;
    std::string out;
    for (std::size_t i = 0; i < names.size() && i < shown; ++i) out += (i ? ", " : "") + names[i];
    if (names.size() > shown) out += fmt::format(" and {} more", names.size() - shown);
    return out;
}

}  // namespace

std::vector<topology_entry> parse_topology_text(const std::string& text, const std::string& source) {
    std::vector<topology_entry> out;
    std::map<std::string, std::size_t> seen;  // normalised host -> line
    std::istringstream in(text);
    std::string line;
    for (std::size_t number = 1; std::getline(in, line); ++number) {
        if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
        std::istringstream words(line);
        topology_entry e;
        e.line = number;
        if (!(words >> e.host)) continue;
        for (std::string w; words >> w;) {
            const auto eq = w.find('=');
            if (eq == std::string::npos || eq == 0 || eq + 1 == w.size())
                throw client_error(exit_usage, fmt::format("{} line {}: '{}' is not a label; write KEY=VALUE, e.g. leaf=l1",
                                                           source, number, w));
            const std::string key = w.substr(0, eq);
            if (std::any_of(e.labels.begin(), e.labels.end(), [&](const auto& l) { return l.first == key; }))
                throw client_error(exit_usage, fmt::format("{} line {}: label {} is given twice for {}", source, number, key, e.host));
            e.labels.emplace_back(key, w.substr(eq + 1));
        }
        if (e.labels.empty())
            throw client_error(exit_usage, fmt::format("{} line {}: host {} has no labels; write HOST KEY=VALUE..., e.g. "
                                                       "'{} leaf=l1'",
                                                       source, number, e.host, e.host));
        if (const auto [it, fresh] = seen.emplace(normal(e.host), number); !fresh)
            throw client_error(exit_usage, fmt::format("{} line {}: host {} is already on line {}", source, number, e.host, it->second));
        out.push_back(std::move(e));
    }
    if (out.empty()) throw client_error(exit_usage, fmt::format("{} names no hosts; write one 'HOST KEY=VALUE...' a line", source));
    return out;
}

topology group_hosts(const std::vector<topology_entry>& entries, std::span<const std::string> hosts, const std::string& group_by,
                     const std::string& source) {
    topology t;
    t.key = group_by.empty() ? entries.at(0).labels.at(0).first : group_by;
    std::map<std::string, const topology_entry*> by_host;
    for (const auto& e : entries) by_host.emplace(normal(e.host), &e);
    std::vector<std::string> left_out, unlabelled, unknown;
    std::map<std::string, std::size_t> in_list;
    for (const auto& h : hosts) in_list.emplace(normal(h), 0);
    for (const auto& e : entries)
        if (!in_list.contains(normal(e.host))) unknown.push_back(e.host);
    std::map<std::string, std::size_t> group_index;
    for (const auto& h : hosts) {
        const auto it = by_host.find(normal(h));
        if (it == by_host.end()) {
            left_out.push_back(h);
            continue;
        }
        const auto& labels = it->second->labels;
        const auto label = std::find_if(labels.begin(), labels.end(), [&](const auto& l) { return l.first == t.key; });
        if (label == labels.end()) {
            unlabelled.push_back(h);
            continue;
        }
        const auto [g, fresh] = group_index.emplace(label->second, t.group_names.size());
        if (fresh) t.group_names.push_back(label->second);
        t.group_of.push_back(g->second);
    }
    std::vector<std::string> problems;
    if (!left_out.empty())
        problems.push_back(fmt::format("{} leaves out {} host(s) of --hosts: {}", source, left_out.size(), first_few(left_out)));
    if (!unknown.empty())
        problems.push_back(fmt::format("{} names {} host(s) that are not in --hosts: {}", source, unknown.size(), first_few(unknown)));
    if (!unlabelled.empty())
        problems.push_back(fmt::format("{} host(s) have no label {}: {}", unlabelled.size(), t.key, first_few(unlabelled)));
    if (!problems.empty()) {
        std::string msg;
        for (const auto& p : problems) msg += (msg.empty() ? "" : "; ") + p;
        throw client_error(exit_usage, msg + "; give every host of --hosts one line 'HOST " + t.key + "=GROUP' and no others");
    }
    return t;
}

topology read_topology(const std::string& path, std::span<const std::string> hosts, const std::string& group_by) {
    std::string text;
    try {
        text = transport::read_small_file(path, transport::max_list_file_bytes, "topology file");
    } catch (const core::spec_error& e) {
        throw client_error(exit_usage, e.what());
    }
    return group_hosts(parse_topology_text(text, path), hosts, group_by, path);
}

}  // namespace meshperf::client
