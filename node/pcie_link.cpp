#include "node/pcie_link.hpp"

#include "node/sysfs_text.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <system_error>

namespace meshperf::node {

namespace {

std::optional<int> lanes(const std::filesystem::path& file) {
    const auto v = read_integer(file);
    if (!v || *v <= 0 || *v > 64) return std::nullopt;
    return static_cast<int>(*v);
}

std::optional<double> gts(const std::filesystem::path& file) {
    const auto text = read_line(file);
    if (!text) return std::nullopt;
    const auto v = leading_number(*text);  // "Unknown" (a link down) is not a number
    if (!v || *v <= 0) return std::nullopt;
    return v;
}

std::string width_text(const std::optional<int>& w) { return w ? fmt::format("x{}", *w) : "x?"; }
std::string speed_text(const std::optional<double>& s) { return s ? fmt::format("{:g} GT/s", *s) : "? GT/s"; }

}  // namespace

pcie_link read_pcie_link(const std::filesystem::path& sysfs_root, const std::string& bus_id) {
    const auto dir = sysfs_root / "bus/pci/devices" / bus_id;
    pcie_link l{lanes(dir / "current_link_width"), lanes(dir / "max_link_width"), gts(dir / "current_link_speed"),
                gts(dir / "max_link_speed")};
    std::error_code ec;
    for (const auto* f : {"current_link_width", "max_link_width", "current_link_speed", "max_link_speed"})
        l.has_attributes = l.has_attributes || std::filesystem::exists(dir / f, ec);
    return l;
}

std::string describe(const pcie_link& l) {
    return fmt::format("{} at {} (can do {} at {})", width_text(l.current_width), speed_text(l.current_gts),
                       width_text(l.max_width), speed_text(l.max_gts));
}

std::string describe_max(const pcie_link& l) { return fmt::format("{} at {}", width_text(l.max_width), speed_text(l.max_gts)); }

pcie_link capped_by(pcie_link l, const pcie_link& partner) {
    if (l.max_width && partner.max_width) l.max_width = std::min(*l.max_width, *partner.max_width);
    if (l.max_gts && partner.max_gts) l.max_gts = std::min(*l.max_gts, *partner.max_gts);
    return l;
}

bool capped(const pcie_link& l, const pcie_link& partner) {
    const auto c = capped_by(l, partner);
    return c.max_width != l.max_width || c.max_gts != l.max_gts;
}

bool complete(const pcie_link& l) { return l.current_width && l.max_width && l.current_gts && l.max_gts; }

bool width_downgraded(const pcie_link& l) { return l.current_width && l.max_width && *l.current_width < *l.max_width; }

bool speed_downgraded(const pcie_link& l) { return l.current_gts && l.max_gts && *l.current_gts < *l.max_gts - 1e-9; }

}  // namespace meshperf::node
