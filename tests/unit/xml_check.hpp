#pragma once
// A small XML well-formedness check for the renderers' output in the unit tests (svg_test,
// html_report_test): no external parser here; tests/integration runs xmllint on real files.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace xml_check {

/// What check() found in one document.
struct report {
    bool ok = true;
    std::string error;
    std::string root;
    std::map<std::string, std::size_t> elements;  // element name -> count
    bool numbers_finite = true;                   // every number in a geometry attribute
    double max_coordinate = 0;
};

inline bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' || c == '.'; }

inline bool valid_text(std::string_view t) {
    for (std::size_t i = 0; i < t.size(); ++i) {
        if (t[i] == '<') return false;
        if (t[i] != '&') continue;
        const auto semi = t.find(';', i);
        if (semi == std::string_view::npos || semi - i > 8) return false;
        const auto ent = t.substr(i + 1, semi - i - 1);
        if (ent != "amp" && ent != "lt" && ent != "gt" && ent != "quot" && ent != "apos" && (ent.empty() || ent[0] != '#'))
            return false;
    }
    return true;
}

inline void check_numbers(report& r, const std::string& name, std::string_view value) {
    static const std::set<std::string> geometry{"x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "width", "height",
                                                "points", "font-size", "stroke-width", "viewBox"};
    if (!geometry.count(name)) return;
    std::string v(value);
    for (char& c : v)
        if (c == ',') c = ' ';
    const char* p = v.c_str();
    while (*p) {
        while (*p == ' ') ++p;
        if (!*p) break;
        char* end = nullptr;
        const double d = std::strtod(p, &end);
        if (end == p || !std::isfinite(d)) {
            r.numbers_finite = false;
            return;
        }
        if (name != "viewBox" && name != "width" && name != "height") r.max_coordinate = std::max(r.max_coordinate, std::fabs(d));
        p = end;
    }
}

/// Checks that `s` is one well-formed XML element and that its geometry attributes are
/// finite numbers.
inline report check(std::string_view s) {
    report r;
    auto fail = [&](std::string why, std::size_t at) {
        if (r.ok) r.error = why + " at offset " + std::to_string(at);
        r.ok = false;
        return r;
    };
    std::vector<std::string> stack;
    std::size_t roots = 0, i = 0;
    while (i < s.size()) {
        const auto lt = s.find('<', i);
        const auto text = s.substr(i, lt == std::string_view::npos ? std::string_view::npos : lt - i);
        if (!valid_text(text)) return fail("bad character data", i);
        if (stack.empty() && text.find_first_not_of(" \t\r\n") != std::string_view::npos)
            return fail("text outside the root element", i);
        if (lt == std::string_view::npos) break;
        if (s.substr(lt, 4) == "<!--") {
            const auto e = s.find("-->", lt);
            if (e == std::string_view::npos) return fail("unterminated comment", lt);
            i = e + 3;
            continue;
        }
        if (s.substr(lt, 2) == "<?") {
            const auto e = s.find("?>", lt);
            if (e == std::string_view::npos) return fail("unterminated processing instruction", lt);
            i = e + 2;
            continue;
        }
        std::size_t p = lt + 1;
        const bool closing = p < s.size() && s[p] == '/';
        if (closing) ++p;
        const auto name_start = p;
        while (p < s.size() && name_char(s[p])) ++p;
        const std::string name(s.substr(name_start, p - name_start));
        if (name.empty()) return fail("tag without a name", lt);
        if (closing) {
            while (p < s.size() && std::isspace(static_cast<unsigned char>(s[p]))) ++p;
            if (p >= s.size() || s[p] != '>') return fail("malformed closing tag", lt);
            if (stack.empty() || stack.back() != name) return fail("unbalanced </" + name + ">", lt);
            stack.pop_back();
            i = p + 1;
            continue;
        }
        if (stack.empty()) {
            if (++roots > 1) return fail("more than one root element", lt);
            r.root = name;
        }
        ++r.elements[name];
        std::set<std::string> attrs;
        bool self_closing = false;
        for (;;) {
            while (p < s.size() && std::isspace(static_cast<unsigned char>(s[p]))) ++p;
            if (p >= s.size()) return fail("unterminated tag", lt);
            if (s[p] == '>') break;
            if (s.substr(p, 2) == "/>") {
                self_closing = true;
                ++p;
                break;
            }
            const auto an = p;
            while (p < s.size() && name_char(s[p])) ++p;
            const std::string attr(s.substr(an, p - an));
            if (attr.empty()) return fail("bad attribute in <" + name + ">", p);
            if (!attrs.insert(attr).second) return fail("duplicate attribute " + attr, p);
            if (p >= s.size() || s[p] != '=') return fail("attribute " + attr + " without a value", p);
            ++p;
            if (p >= s.size() || (s[p] != '"' && s[p] != '\'')) return fail("unquoted attribute " + attr, p);
            const char q = s[p];
            const auto ve = s.find(q, p + 1);
            if (ve == std::string_view::npos) return fail("unterminated attribute " + attr, p);
            const auto value = s.substr(p + 1, ve - p - 1);
            if (!valid_text(value)) return fail("bad attribute value of " + attr, p);
            check_numbers(r, attr, value);
            p = ve + 1;
        }
        if (!self_closing) stack.push_back(name);
        i = p + 1;
    }
    if (!stack.empty()) return fail("unclosed <" + stack.back() + ">", s.size());
    if (roots == 0) return fail("no root element", 0);
    return r;
}

}  // namespace xml_check

/// True when `s` is one well-formed XML element with finite geometry; otherwise false and the reason in *error.
inline bool xml_well_formed(std::string_view s, std::string* error) {
    const auto r = xml_check::check(s);
    if (error) *error = r.ok ? (r.numbers_finite ? "" : "non-finite number in a geometry attribute") : r.error;
    return r.ok && r.numbers_finite;
}
