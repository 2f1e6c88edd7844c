// fi_getinfo's answers for reliable-datagram endpoints, and the provider two daemons share.
#include "transport/ofi/providers.hpp"

#include "core/error.hpp"
#include "transport/ofi/hints.hpp"
#include "transport/ofi/mr_policy.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rdma/fabric.h>

namespace meshperf::transport::ofi {
namespace {

std::vector<std::string> capability_names(std::uint64_t caps) {
    std::vector<std::string> out;
    if (caps & FI_MSG) out.emplace_back("MSG");
    if (caps & FI_TAGGED) out.emplace_back("TAGGED");
    if (caps & FI_RMA) out.emplace_back("RMA");
    if (caps & FI_HMEM) out.emplace_back("HMEM");
    return out;
}

/// Adds fi_getinfo's answers for `hints` to out, skipping repeats of a provider/domain pair.
void collect(fi_info* hints, std::vector<provider_domain>& out) {
    fi_info* list = nullptr;
    if (fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &list) != 0) return;
    for (fi_info* i = list; i; i = i->next) {
        provider_domain d;
        d.provider = i->fabric_attr->prov_name ? i->fabric_attr->prov_name : "";
        d.fabric = i->fabric_attr->name ? i->fabric_attr->name : "";
        d.domain = i->domain_attr->name ? i->domain_attr->name : "";
        d.endpoint_type = "FI_EP_RDM";
        d.capabilities = capability_names(i->caps);
        d.mr_mode = mr_mode_names(static_cast<std::uint64_t>(i->domain_attr->mr_mode));
        d.device = device_of_domain(d.domain);
        const bool seen = std::any_of(out.begin(), out.end(), [&](const provider_domain& o) {
            return o.provider == d.provider && o.fabric == d.fabric && o.domain == d.domain;
        });
        if (!seen) out.push_back(std::move(d));
    }
    fi_freeinfo(list);
}

}  // namespace

nlohmann::json to_json(const provider_domain& d) {
    nlohmann::json j = {{"provider", d.provider},           {"fabric", d.fabric},   {"domain", d.domain},
                        {"endpoint_type", d.endpoint_type}, {"capabilities", d.capabilities}, {"mr_mode", d.mr_mode}};
    if (!d.device.empty()) j["device"] = d.device;
    return j;
}

std::vector<provider_domain> list_provider_domains() {
    std::vector<provider_domain> out;
    // shm answers only when named; the rest answer a query without a provider.
    for (const char* name : {static_cast<const char*>(nullptr), "shm"}) {
        fi_info* hints = make_hints(name ? name : "", message_kind::msg);
        hints->caps = 0;  // every capability the provider has, so that TAGGED, RMA and HMEM are listed as found
        collect(hints, out);
        fi_freeinfo(hints);
    }
    return out;
}

std::string core_provider(std::string_view provider) {
    const auto semi = provider.find(';');
    return std::string(semi == std::string_view::npos ? provider : provider.substr(0, semi));
}

const std::vector<std::string_view>& preferred_providers() {
    static const std::vector<std::string_view> order{"efa", "cxi", "verbs", "tcp"};
    return order;
}

std::vector<std::string> provider_names(const std::vector<provider_domain>& domains) {
    std::vector<std::string> names;
    for (const auto& d : domains) {
        auto n = core_provider(d.provider);
        if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(std::move(n));
    }
    const auto& pref = preferred_providers();
    const auto rank = [&](const std::string& n) {
        const auto it = std::find(pref.begin(), pref.end(), n);
        return static_cast<std::size_t>(it - pref.begin());
    };
    std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
        return rank(a) != rank(b) ? rank(a) < rank(b) : a < b;
    });
    return names;
}

std::string choose_provider(std::string_view requested, const std::vector<std::string>& initiator,
                            const std::vector<std::string>& peer) {
    const auto has = [](const std::vector<std::string>& list, std::string_view n) {
        return std::find(list.begin(), list.end(), n) != list.end();
    };
    const auto lists = fmt::format("the initiator has [{}], the peer has [{}]", fmt::join(initiator, ", "), fmt::join(peer, ", "));
    if (!requested.empty()) {
        const auto want = core_provider(requested);
        if (has(initiator, want) && has(peer, want)) return want;
        throw core::spec_error(fmt::format("libfabric provider '{}' is not on both daemons: {}; choose one both have with "
                                           "--ofi-provider",
                                           requested, lists));
    }
    for (auto p : preferred_providers())
        if (has(initiator, p) && has(peer, p)) return std::string(p);
    throw core::spec_error(fmt::format("no libfabric provider for a network between hosts is common to both daemons "
                                       "({}; the default takes one of {}): name one both have with --ofi-provider",
                                       lists, fmt::join(preferred_providers(), ", ")));
}

std::string device_of_domain(std::string_view domain, const std::filesystem::path& sysfs_root) {
    std::vector<std::string> names{std::string(domain)};
    for (std::string_view suffix : {"-rdm", "-dgram", "-xrc"})
        if (domain.size() > suffix.size() && domain.ends_with(suffix))
            names.emplace_back(domain.substr(0, domain.size() - suffix.size()));
    for (const auto& n : names) {
        if (n.empty() || n.find('/') != std::string::npos || n == "." || n == "..") continue;
        std::error_code ec;
        for (const char* cls : {"class/infiniband", "class/cxi"})
            if (std::filesystem::exists(sysfs_root / cls / n, ec)) return n;
    }
    return {};
}

}  // namespace meshperf::transport::ofi
