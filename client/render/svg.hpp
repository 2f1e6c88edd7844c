#pragma once
/// The building blocks every meshperf SVG is made of (sweep plots, collective plots,
/// heatmaps, the report's inline figures): escaping, palette, font, numbers, text, markers
/// and the opening element. Pure string output.
///
/// The SVG has no XML declaration, no <style> and no id attributes, so it can be written to
/// a file as it is or inlined into HTML, several to a page, without clashes.
#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace meshperf::client {

/// Escapes text for XML content and attribute values (& < > " ').
std::string xml_escape(std::string_view text);

/// Series colours: the Okabe–Ito palette, safe for the common colour-vision deficiencies,
/// in drawing order (yellow, the weakest on white, is left out).
inline constexpr std::array<std::string_view, 7> series_palette{
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000"};

/// Font stack used by every meshperf SVG.
inline constexpr std::string_view svg_font_family = "'DejaVu Sans', 'Helvetica Neue', Arial, sans-serif";

namespace svg {
/// A coordinate with one decimal; a non-finite value becomes 0, so no NaN reaches the SVG.
std::string num(double v);
/// Code points in UTF-8 text, and its approximate rendered width in px (sans-serif).
std::size_t text_columns(std::string_view s);
double text_width(std::string_view s, double font_px);
/// Appends <text> with escaped content; extra is raw attributes ("fill=\"#222\"").
void text(std::string& out, double x, double y, std::string_view content, double font_px, std::string_view anchor,
          std::string_view extra = {});
/// Appends a marker of shape style % 5 (circle, square, triangle, diamond, inverted
/// triangle): filled with a white edge, or hollow.
void marker(std::string& out, std::size_t style, double x, double y, std::string_view colour, bool hollow);
/// The opening <svg> element with a <title> and a white background.
std::string open_svg(double width, double height, std::string_view title);
}  // namespace svg

}  // namespace meshperf::client
