#include "daemon/transports/registry.hpp"

#include "core/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <cstdio>
#include <map>
#include <atomic>
#include <mutex>

#include "transport/child_output.hpp"

namespace meshperf::daemon {

// Each transport's entry, made in its own folder. Registering a transport is its line here
// and in make_registry.
transport_entry tcp_transport();  // daemon/transports/tcp/entry.cpp
#ifdef MESHPERF_HAVE_RDMA
transport_entry rdma_transport();  // daemon/transports/rdma/entry.cpp
#endif
#ifdef MESHPERF_HAVE_OFI
transport_entry ofi_transport();  // daemon/transports/ofi/entry.cpp
#endif

namespace {

/// A transport this build knows by name but was built without: /v1/info says why, and a
/// run over it is refused with the same words.
[[maybe_unused]] transport_entry not_built(std::string name, std::string why, nlohmann::json info_fields) {
    transport_entry e;
    e.name = std::move(name);
    e.built = false;
    e.inventory = [why = std::move(why), fields = std::move(info_fields)] { return transport_inventory{false, why, fields}; };
    return e;
}

std::vector<transport_entry> make_registry() {
    std::vector<transport_entry> out;
    out.push_back(tcp_transport());
#ifdef MESHPERF_HAVE_RDMA
    out.push_back(rdma_transport());
#else
    out.push_back(not_built("rdma",
                            "RDMA support is not built into this meshperfd (libibverbs was not found at build time; "
                            "install libibverbs-dev and rebuild with -DMESHPERF_WITH_RDMA=ON)",
                            {{"rdma_devices", nlohmann::json::array()}}));
#endif
#ifdef MESHPERF_HAVE_OFI
    out.push_back(ofi_transport());
#else
    out.push_back(not_built("ofi",
                            "libfabric support is not built into this meshperfd (libfabric was not found at build time; "
                            "install libfabric-dev and rebuild with -DMESHPERF_WITH_OFI=ON)",
                            {{"ofi", nlohmann::json::object()}}));
#endif
    return out;
}

/// "unknown transport 'x': this meshperfd has tcp, rdma (rdma: no RDMA device found)".
std::string unknown_transport(std::string_view name) {
    std::vector<std::string> names, absent;
    for (const auto& e : transports()) {
        names.push_back(e.name);
        if (auto inv = e.inventory(); !inv.available) absent.push_back(fmt::format("{}: {}", e.name, inv.reason));
    }
    auto text = fmt::format("unknown transport '{}': this meshperfd has {}", name, fmt::join(names, ", "));
    if (!absent.empty()) text += fmt::format(" ({})", fmt::join(absent, "; "));
    return text;
}

}  // namespace

const std::vector<transport_entry>& transports() {
    static const std::vector<transport_entry> registry = make_registry();
    return registry;
}

const transport_entry& find_transport(std::string_view name) {
    for (const auto& e : transports()) {
        if (e.name != name) continue;
        if (!e.built) throw core::spec_error(e.inventory().reason);
        return e;
    }
    throw core::spec_error(unknown_transport(name));
}

void check_spec_here(const core::run_spec& spec) {
    for (const auto& e : transports())
        if (e.name == spec.transport && e.built && e.check_spec) e.check_spec(spec);
}

int print_inventory(std::string_view name) {
    for (const auto& e : transports())
        if (e.name == name && e.inventory_in_process) {
            const auto inv = e.inventory_in_process();
            std::fputs(nlohmann::json{{"available", inv.available}, {"reason", inv.reason}, {"info_fields", inv.info_fields}}
                           .dump()
                           .c_str(),
                       stdout);
            return 0;
        }
    std::fprintf(stderr, "meshperfd: --inventory-child: no transport '%.*s' with an in-process inventory\n",
                 static_cast<int>(name.size()), name.data());
    return 2;
}

namespace {
std::atomic<bool> inventory_children{false};
}  // namespace

void enable_inventory_children() { inventory_children = true; }

transport_inventory inventory_from_child(std::string_view name, std::chrono::seconds max_age) {
    if (!inventory_children) {  // not meshperfd (a unit test): /proc/self/exe would not answer
        for (const auto& e : transports())
            if (e.name == name && e.inventory_in_process) return e.inventory_in_process();
        return transport_inventory{false, "no inventory", nlohmann::json::object()};
    }
    struct cached {
        std::chrono::steady_clock::time_point at;
        transport_inventory inv;
    };
    static std::mutex mutex;
    static std::map<std::string, cached, std::less<>> cache;
    std::lock_guard lock(mutex);
    const auto now = std::chrono::steady_clock::now();
    if (const auto it = cache.find(name); it != cache.end() && now - it->second.at < max_age) return it->second.inv;
    transport_inventory inv;
    std::string why;
    const auto out = transport::run_child("/proc/self/exe", {"--inventory-child", std::string(name)},
                                          std::chrono::seconds{10}, 1 << 20, why);
    const auto doc = out && out->status == 0 ? nlohmann::json::parse(out->out, nullptr, false) : nlohmann::json();
    if (doc.is_object() && doc.value("available", nlohmann::json()).is_boolean()) {
        inv.available = doc["available"].get<bool>();
        inv.reason = doc.value("reason", std::string());
        if (doc.contains("info_fields") && doc["info_fields"].is_object()) inv.info_fields = doc["info_fields"];
    } else {
        inv.reason = fmt::format("its inventory could not be read: {}",
                                 !out ? why : fmt::format("the inventory process exited {}", out->status));
    }
    cache[std::string(name)] = {now, inv};
    return inv;
}

std::string unavailable_reason(std::string_view name) {
    for (const auto& e : transports())
        if (e.name == name) {
            auto inv = e.inventory();
            if (inv.available) return {};
            return inv.reason.empty() ? std::string("not available on this host") : inv.reason;
        }
    return "not a transport of this meshperfd";
}

const sweep_plugins& find_sweep_plugins(std::string_view name) { return find_transport(name).sweep; }

const collective_plugin& find_collective_plugin(std::string_view name) { return find_transport(name).collective; }

nlohmann::json transports_info() {
    auto out = nlohmann::json::object();
    auto list = nlohmann::json::array();
    for (const auto& e : transports()) {
        const auto inv = e.inventory();
        nlohmann::json item{{"name", e.name}, {"available", inv.available}};
        if (!inv.reason.empty()) item["reason"] = inv.reason;
        list.push_back(std::move(item));
        for (const auto& [key, value] : inv.info_fields.items()) out[key] = value;
    }
    out["transports"] = std::move(list);
    return out;
}

}  // namespace meshperf::daemon
