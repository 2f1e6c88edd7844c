#include "node/acs.hpp"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <iterator>
#include <vector>

namespace meshperf::node {

namespace {

constexpr std::size_t extended_start = 0x100;
constexpr std::size_t config_size = 4096;

std::uint32_t le32(std::span<const std::uint8_t> b, std::size_t at) {
    return std::uint32_t(b[at]) | std::uint32_t(b[at + 1]) << 8 | std::uint32_t(b[at + 2]) << 16 | std::uint32_t(b[at + 3]) << 24;
}

}  // namespace

acs_state parse_acs(std::span<const std::uint8_t> config) {
    acs_state s;
    if (config.size() < extended_start + 4) {
        s.why = fmt::format("only {} bytes of configuration space readable (the extended space past byte 256 needs "
                            "root)",
                            config.size());
        return s;
    }
    std::size_t at = extended_start;
    for (int hops = 0; hops < 1024; ++hops) {
        const auto header = le32(config, at);
        if (header == 0 || header == 0xffffffffu) {
            s.state = acs_state::kind::absent;  // no (further) extended capability
            return s;
        }
        if ((header & 0xffffu) == acs_capability_id) {
            if (at + 8 > config.size()) {
                s.why = fmt::format("the ACS capability at 0x{:x} runs past the {} bytes read", at, config.size());
                return s;
            }
            s.cap_offset = static_cast<std::uint16_t>(at);
            s.control = static_cast<std::uint16_t>(config[at + 6] | config[at + 7] << 8);
            const auto redirect = acs_p2p_request_redirect | acs_p2p_completion_redirect | acs_upstream_forwarding;
            s.state = (s.control & redirect) ? acs_state::kind::redirects : acs_state::kind::disabled;
            return s;
        }
        const std::size_t next = header >> 20;
        if (next == 0) {
            s.state = acs_state::kind::absent;
            return s;
        }
        if (next < extended_start || next % 4 != 0 || next + 4 > config.size()) {
            s.why = fmt::format("the extended capability list points to 0x{:x}, outside the {} bytes read", next,
                                config.size());
            return s;
        }
        at = next;
    }
    s.why = "the extended capability list loops";
    return s;
}

acs_state read_acs(const std::filesystem::path& sysfs_root, const std::string& bus_id) {
    const auto file = sysfs_root / "bus/pci/devices" / bus_id / "config";
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        acs_state s;
        s.why = fmt::format("{} cannot be read: {}", file.string(), std::strerror(errno));
        return s;
    }
    std::vector<std::uint8_t> bytes(config_size);
    in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    bytes.resize(static_cast<std::size_t>(in.gcount()));
    return parse_acs(bytes);
}

std::string redirect_bits(std::uint16_t control) {
    std::string out;
    const auto add = [&](std::uint16_t bit, const char* name) {
        if (control & bit) out += (out.empty() ? "" : ", ") + std::string(name);
    };
    add(acs_p2p_request_redirect, "P2P Request Redirect");
    add(acs_p2p_completion_redirect, "P2P Completion Redirect");
    add(acs_upstream_forwarding, "Upstream Forwarding");
    return out;
}

}  // namespace meshperf::node
