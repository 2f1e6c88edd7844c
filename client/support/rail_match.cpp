#include "client/support/rail_match.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

namespace meshperf::client {

using nlohmann::json;

namespace {

/// One address of a rail with its prefix, as /v1/info lists it ("10.1.0.1/24").
struct rail_address {
    std::string ip;
    int family = 0;
    unsigned char bytes[16]{};
    int prefix = -1;  ///< -1: unknown (only an exact name match can use it)
};

/// One rail of one side.
struct side_rail {
    std::string name;
    std::vector<rail_address> addresses;  ///< usable ones: not link-local
    std::optional<double> rate_gbit;
    std::optional<bool> link_up;
};

std::optional<rail_address> parse_address(const std::string& text) {
    rail_address a;
    const auto slash = text.find('/');
    a.ip = text.substr(0, slash);
    if (::inet_pton(AF_INET, a.ip.c_str(), a.bytes) == 1) a.family = AF_INET;
    else if (::inet_pton(AF_INET6, a.ip.c_str(), a.bytes) == 1) a.family = AF_INET6;
    else return std::nullopt;
    if (a.family == AF_INET6 && a.bytes[0] == 0xfe && (a.bytes[1] & 0xc0) == 0x80) return std::nullopt;  // link-local
    if (slash != std::string::npos) {
        try {
            a.prefix = std::stoi(text.substr(slash + 1));
        } catch (const std::exception&) {
            a.prefix = -1;
        }
        if (a.prefix < 0 || a.prefix > (a.family == AF_INET ? 32 : 128)) a.prefix = -1;
    }
    return a;
}

std::vector<side_rail> read_side(const json& list, const std::string& who) {
    if (!list.is_array())
        throw core::spec_error(fmt::format("{} lists no rails in GET /v1/info (a meshperfd older than rails, or none configured): "
                                           "update it, or measure without --rails",
                                           who));
    std::vector<side_rail> out;
    for (const auto& r : list) {
        if (!r.is_object() || !r.contains("name") || !r["name"].is_string()) continue;
        side_rail s;
        s.name = r["name"].get<std::string>();
        if (const auto a = r.find("addresses"); a != r.end() && a->is_array())
            for (const auto& x : *a)
                if (x.is_string())
                    if (auto parsed = parse_address(x.get<std::string>())) s.addresses.push_back(*parsed);
        if (const auto g = r.find("rate_gbit_per_s"); g != r.end() && g->is_number() && g->get<double>() > 0) s.rate_gbit = g->get<double>();
        if (const auto u = r.find("link_up"); u != r.end() && u->is_boolean()) s.link_up = u->get<bool>();
        out.push_back(std::move(s));
    }
    return out;
}

std::string names_of(const std::vector<side_rail>& rails) {
    if (rails.empty()) return "none";
    std::vector<std::string> n;
    for (const auto& r : rails) n.push_back(r.name);
    return fmt::format("{}", fmt::join(n, ", "));
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const auto comma = text.find(',', pos);
        auto item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        if (!item.empty()) out.push_back(item);
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return out;
}

bool same_subnet(const rail_address& a, const rail_address& b) {
    if (a.family != b.family || a.prefix < 0 || a.prefix != b.prefix) return false;
    const int full = a.prefix / 8, rest = a.prefix % 8;
    if (!std::equal(a.bytes, a.bytes + full, b.bytes)) return false;
    if (rest == 0) return true;
    const unsigned char mask = static_cast<unsigned char>(0xff << (8 - rest));
    return (a.bytes[full] & mask) == (b.bytes[full] & mask);
}

/// The pair of addresses two rails share a subnet on, IPv4 first; empty when none.
std::optional<std::pair<std::string, std::string>> shared_subnet(const side_rail& a, const side_rail& b) {
    for (int family : {AF_INET, AF_INET6})
        for (const auto& x : a.addresses)
            for (const auto& y : b.addresses)
                if (x.family == family && same_subnet(x, y)) return std::make_pair(x.ip, y.ip);
    return std::nullopt;
}

/// Addresses for rails matched by name or map across subnets: the first of one family both have.
std::optional<std::pair<std::string, std::string>> any_pair(const side_rail& a, const side_rail& b) {
    if (const auto s = shared_subnet(a, b)) return s;
    for (int family : {AF_INET, AF_INET6})
        for (const auto& x : a.addresses)
            for (const auto& y : b.addresses)
                if (x.family == family && y.family == family) return std::make_pair(x.ip, y.ip);
    return std::nullopt;
}

const side_rail* find(const std::vector<side_rail>& rails, const std::string& name) {
    for (const auto& r : rails)
        if (r.name == name) return &r;
    return nullptr;
}

}  // namespace

nlohmann::json without_control_rails(const nlohmann::json& rails, const rail_request& request,
                                     const std::vector<std::string>& daemon_addresses, const std::string& whose,
                                     std::vector<std::string>& notes) {
    if (request.rails != "all" || !rails.is_array() || daemon_addresses.empty()) return rails;
    auto kept = nlohmann::json::array();
    for (const auto& r : rails) {
        std::string control;
        if (r.is_object() && r.contains("addresses") && r["addresses"].is_array())
            for (const auto& a : r["addresses"])
                if (a.is_string()) {
                    const auto addr = a.get<std::string>().substr(0, a.get<std::string>().find('/'));
                    if (std::find(daemon_addresses.begin(), daemon_addresses.end(), addr) != daemon_addresses.end()) control = addr;
                }
        if (control.empty()) {
            kept.push_back(r);
            continue;
        }
        const auto name = r.is_object() && r.value("name", nlohmann::json()).is_string() ? r["name"].get<std::string>() : "?";
        notes.push_back(fmt::format("{}'s rail {} ({}) carries the control connection to its daemon: the management network, "
                                    "not measured as a rail (name it in --rails to measure it anyway)",
                                    whose, name, control));
    }
    return kept;
}

namespace {

/// `text` cut to `most` characters with "..." (a 100,000-character option is not echoed whole).
std::string shortened(const std::string& text, std::size_t most) {
    return text.size() <= most ? text : text.substr(0, most) + "... (" + std::to_string(text.size()) + " characters)";
}

}  // namespace

rail_matching match_rails(const json& initiator_rails, const json& peer_rails, const rail_request& req,
                          const std::string& initiator_name, const std::string& peer_name) {
    const auto a = read_side(initiator_rails, initiator_name), b = read_side(peer_rails, peer_name);
    if (a.empty() || b.empty())
        throw core::spec_error(fmt::format("rails on one side only: {} has {} ({}), {} has {} ({}); a daemon lists as rails its "
                                           "up interfaces with an address other than its control interface ([rails] in its "
                                           "configuration, docs/rails.md)",
                                           initiator_name, a.size(), names_of(a), peer_name, b.size(), names_of(b)));
    // Which of the initiator's rails.
    std::vector<const side_rail*> selected;
    const bool all = req.rails == "all";
    if (all) {
        for (const auto& r : a) selected.push_back(&r);
    } else {
        const auto names = split_list(req.rails);
        if (names.empty()) throw core::spec_error("--rails is empty: give all or rail names of the initiator, comma separated");
        for (const auto& n : names) {
            const auto* r = find(a, n);
            if (!r)
                throw core::spec_error(fmt::format("--rails {}: {} has no rail {}; its rails are {}{}", shortened(req.rails, 80),
                                                   initiator_name, shortened(n, 80),
                                                   names_of(a), find(b, n) ? fmt::format(" ({} is {}'s: --rails names the initiator's rails)", n, peer_name) : ""));
            if (std::find(selected.begin(), selected.end(), r) != selected.end())
                throw core::spec_error(fmt::format("--rails names {} twice: give each rail once", n));
            selected.push_back(r);
        }
    }
    // The map, checked whole before anything is matched.
    std::map<std::string, std::string> mapped;  // initiator rail -> peer rail
    std::map<std::string, std::string> mapped_back;
    for (const auto& item : split_list(req.rail_map)) {
        const auto eq = item.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
            throw core::spec_error(fmt::format("--rail-map item '{}': write INITIATOR_RAIL=PEER_RAIL, e.g. ens1=ens1", item));
        const auto x = item.substr(0, eq), y = item.substr(eq + 1);
        if (!find(a, x)) throw core::spec_error(fmt::format("--rail-map {}: {} has no rail {}; its rails are {}", item, initiator_name, x, names_of(a)));
        if (!find(b, y)) throw core::spec_error(fmt::format("--rail-map {}: {} has no rail {}; its rails are {}", item, peer_name, y, names_of(b)));
        if (mapped.contains(x)) throw core::spec_error(fmt::format("--rail-map pairs {}'s rail {} twice ({} and {}): give each rail once", initiator_name, x, mapped[x], y));
        if (mapped_back.contains(y)) throw core::spec_error(fmt::format("--rail-map pairs {}'s rail {} twice ({} and {}): give each rail once", peer_name, y, mapped_back[y], x));
        mapped[x] = y;
        mapped_back[y] = x;
    }
    rail_matching out;
    std::map<std::string, std::string> taken;  // peer rail -> initiator rail
    for (const auto* r : selected) {
        if (r->addresses.empty())
            throw core::spec_error(fmt::format("{}'s rail {} has no IP address: TCP rails need one (ip addr add ... dev {})",
                                               initiator_name, r->name, r->name));
        const side_rail* partner = nullptr;
        std::optional<std::pair<std::string, std::string>> addrs;
        std::string how;
        if (const auto m = mapped.find(r->name); m != mapped.end()) {
            partner = find(b, m->second);
            addrs = any_pair(*r, *partner);
            how = "--rail-map";
        } else {
            std::vector<const side_rail*> same;
            for (const auto& c : b)
                if (shared_subnet(*r, c)) same.push_back(&c);
            if (same.size() > 1)
                throw core::spec_error(fmt::format("{}'s rail {} shares a subnet with several rails of {} ({}, {}): pair it with "
                                                   "--rail-map {}=RAIL",
                                                   initiator_name, r->name, peer_name, same[0]->name, same[1]->name, r->name));
            if (same.size() == 1) {
                partner = same[0];
                addrs = shared_subnet(*r, *partner);
                how = "subnet";
            } else if (const auto* byname = find(b, r->name)) {
                partner = byname;
                addrs = any_pair(*r, *partner);
                how = "name";
            }
        }
        if (!partner)
            throw core::spec_error(fmt::format("{}'s rail {} has no partner on {}: no rail of {} in its subnet and none of its "
                                               "name ({}'s rails: {}); pair it with --rail-map {}=RAIL or leave it out with --rails",
                                               initiator_name, r->name, peer_name, peer_name, peer_name, names_of(b), r->name));
        if (!addrs)
            throw core::spec_error(fmt::format("rails {} of {} and {} of {} have no address family in common", r->name,
                                               initiator_name, partner->name, peer_name));
        if (const auto t = taken.find(partner->name); t != taken.end())
            throw core::spec_error(fmt::format("{}'s rail {} would be the partner of both {} and {}: pair them with --rail-map",
                                               peer_name, partner->name, t->second, r->name));
        taken[partner->name] = r->name;
        if (how == "name")
            out.notes.push_back(fmt::format("rail {}: matched with {}'s {} by name, not by subnet ({} -> {}): its traffic takes "
                                            "whatever route leads there",
                                            r->name, peer_name, partner->name, addrs->first, addrs->second));
        for (const auto* side : {r, partner})
            if (side->link_up == false)
                out.notes.push_back(fmt::format("rail {}: the link of {} is down; its streams will move nothing", r->name, side->name));
        core::rail_pair p;
        p.name = r->name;
        p.peer_name = partner->name;
        p.local_address = addrs->first;
        p.peer_address = addrs->second;
        if (r->rate_gbit && partner->rate_gbit) p.rate_gbit = std::min(*r->rate_gbit, *partner->rate_gbit);
        out.rails.push_back(std::move(p));
    }
    if (all)
        for (const auto& c : b)
            if (!taken.contains(c.name))
                throw core::spec_error(fmt::format("{}'s rail {} has no partner on {} ({}'s rails: {}): with --rails all every rail "
                                                   "of both must pair; name the rails to measure with --rails, or pair it with "
                                                   "--rail-map",
                                                   peer_name, c.name, initiator_name, initiator_name, names_of(a)));
    core::validate_rails(out.rails);
    return out;
}

}  // namespace meshperf::client
