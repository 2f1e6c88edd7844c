#include "client/render/svg.hpp"

#include <cmath>
#include <fmt/format.h>
#include <iterator>

namespace meshperf::client {

namespace svg {

std::string num(double v) {
    if (!std::isfinite(v)) v = 0;  // callers draw finite values only; never emit NaN
    if (std::fabs(v) < 0.05) v = 0;  // no "-0.0"
    return fmt::format("{:.1f}", v);
}

std::size_t text_columns(std::string_view s) {
    std::size_t n = 0;
    for (unsigned char c : s)
        if ((c & 0xC0) != 0x80) ++n;  // count UTF-8 code points
    return n;
}

double text_width(std::string_view s, double font_px) { return static_cast<double>(text_columns(s)) * font_px * 0.6; }

void text(std::string& out, double x, double y, std::string_view content, double font_px, std::string_view anchor,
          std::string_view extra) {
    fmt::format_to(std::back_inserter(out), R"(<text x="{}" y="{}" font-size="{}" text-anchor="{}"{}{}>{}</text>)",
                   num(x), num(y), font_px, anchor, extra.empty() ? "" : " ", extra, xml_escape(content));
    out += '\n';
}

void marker(std::string& out, std::size_t style, double x, double y, std::string_view colour, bool hollow) {
    const std::string_view fill = hollow ? std::string_view("#ffffff") : colour;
    const std::string_view stroke = hollow ? colour : std::string_view("#ffffff");
    const std::string paint = fmt::format(R"(fill="{}" stroke="{}" stroke-width="{}")", fill, stroke, hollow ? 1.6 : 1.2);
    const double r = 4.2;
    switch (style % 5) {
    case 0:
        fmt::format_to(std::back_inserter(out), R"(<circle cx="{}" cy="{}" r="{}" {}/>)", num(x), num(y), r, paint);
        break;
    case 1:
        fmt::format_to(std::back_inserter(out), R"(<rect x="{}" y="{}" width="{}" height="{}" {}/>)", num(x - r * 0.9),
                       num(y - r * 0.9), num(r * 1.8), num(r * 1.8), paint);
        break;
    case 2:
        fmt::format_to(std::back_inserter(out), R"(<polygon points="{},{} {},{} {},{}" {}/>)", num(x), num(y - r * 1.2),
                       num(x + r * 1.1), num(y + r * 0.8), num(x - r * 1.1), num(y + r * 0.8), paint);
        break;
    case 3:
        fmt::format_to(std::back_inserter(out), R"(<polygon points="{},{} {},{} {},{} {},{}" {}/>)", num(x),
                       num(y - r * 1.25), num(x + r * 1.1), num(y), num(x), num(y + r * 1.25), num(x - r * 1.1), num(y),
                       paint);
        break;
    default:
        fmt::format_to(std::back_inserter(out), R"(<polygon points="{},{} {},{} {},{}" {}/>)", num(x), num(y + r * 1.2),
                       num(x + r * 1.1), num(y - r * 0.8), num(x - r * 1.1), num(y - r * 0.8), paint);
        break;
    }
    out += '\n';
}

std::string open_svg(double width, double height, std::string_view title) {
    std::string out = fmt::format(
        R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}" font-family="{}" role="img">)",
        num(width), num(height), num(width), num(height), svg_font_family);
    out += '\n';
    fmt::format_to(std::back_inserter(out), "<title>{}</title>\n", xml_escape(title));
    fmt::format_to(std::back_inserter(out), R"(<rect x="0" y="0" width="{}" height="{}" fill="#ffffff"/>)", num(width),
                   num(height));
    out += '\n';
    return out;
}

}  // namespace svg

std::string xml_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default:
            // control characters are not allowed in XML 1.0
            if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') out += ' ';
            else out += c;
        }
    }
    return out;
}

}  // namespace meshperf::client
