#include "daemon/runtime/auth.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdexcept>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

namespace meshperf::daemon {
namespace {

// The name of the user this process runs as, for messages about file ownership.
std::string effective_user() {
    const uid_t uid = ::geteuid();
    passwd pw{};
    passwd* found = nullptr;
    std::array<char, 1024> buf{};
    if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found) return pw.pw_name;
    return fmt::format("uid {}", uid);
}

[[noreturn]] void throw_open_error(int err, const std::string& path) {
    if (err == EACCES)
        throw std::system_error(err, std::generic_category(),
                                fmt::format("open token file {} as user {} (make it owned by that "
                                            "user, mode 600)",
                                            path, effective_user()));
    throw std::system_error(err, std::generic_category(), "open token file " + path);
}

bool ascii_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

char ascii_lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Token syntax shared by the file check and the header parser: b64token (RFC 6750 §2.1),
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=". Returns the offset of the
// first character that breaks it, or npos.
std::size_t token_syntax_error(std::string_view t) noexcept {
    std::size_t i = 0;
    while (i < t.size() && is_token_char(t[i])) ++i;
    if (i == 0) return 0;
    while (i < t.size() && t[i] == '=') ++i;
    return i == t.size() ? std::string_view::npos : i;
}

}  // namespace

bool is_token_char(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~' || c == '+' || c == '/';
}

std::optional<std::string> token_file_mode_problem(const std::string& path, mode_t mode) {
    const mode_t perms = mode & 07777;
    if ((perms & 0077) == 0) return std::nullopt;
    const char* what = (perms & 0044) ? "readable" : (perms & 0022) ? "writable" : "accessible";
    return fmt::format("token file {} is {} by others (mode {:04o}): chmod 600 it", path, what,
                       static_cast<unsigned>(perms));
}

std::string parse_token_text(std::string_view text, const std::string& path) {
    while (!text.empty() && ascii_space(text.back())) text.remove_suffix(1);
    if (text.empty())
        throw core::spec_error(fmt::format(
            "token file {} is empty: write the cluster token into it (e.g. openssl rand -hex 32)", path));
    if (text.size() > max_token_length)
        throw core::spec_error(fmt::format("token file {} holds {} characters; a token is one line of "
                                           "at most {} (e.g. openssl rand -hex 32)",
                                           path, text.size(), max_token_length));
    if (const std::size_t bad = token_syntax_error(text); bad != std::string_view::npos) {
        const auto c = static_cast<unsigned char>(text[bad]);
        // A token character after the '=' padding means '=' stood in the middle.
        const std::string why = c == '\n'                          ? "it holds more than one line"
                                : c == '=' || is_token_char(text[bad]) ? "'=' may only end it"
                                           : fmt::format("character 0x{:02x} at offset {} cannot appear in "
                                                         "a bearer token",
                                                         static_cast<unsigned>(c), bad);
        throw core::spec_error(fmt::format("token file {}: {}; use letters, digits and - . _ ~ + / "
                                           "(e.g. openssl rand -hex 32)",
                                           path, why));
    }
    return std::string(text);
}

std::string load_token_file(const std::filesystem::path& path_) {
    const std::string path = path_.string();
    // O_NONBLOCK: a FIFO put in the token's place must not hang startup before fstat sees it.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) throw_open_error(errno, path);
    struct closer {
        int fd;
        ~closer() { ::close(fd); }
    } guard{fd};

    // Checks go on the opened descriptor, so the file cannot be swapped between check and read.
    struct stat st{};
    if (::fstat(fd, &st) != 0) throw std::system_error(errno, std::generic_category(), "stat token file " + path);
    if (!S_ISREG(st.st_mode))
        throw core::spec_error(fmt::format("token file {} is not a regular file", path));
    if (auto problem = token_file_mode_problem(path, st.st_mode)) throw core::spec_error(*problem);

    // Read a little more than a token may be, so an oversized file is reported as such.
    std::string text(max_token_length + 64, '\0');
    std::size_t have = 0;
    while (have < text.size()) {
        const ssize_t n = ::read(fd, text.data() + have, text.size() - have);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw std::system_error(errno, std::generic_category(), "read token file " + path);
        }
        if (n == 0) break;
        have += static_cast<std::size_t>(n);
    }
    text.resize(have);
    return parse_token_text(text, path);
}

bool tokens_equal(std::string_view expected, std::string_view presented) noexcept {
    if (expected.empty()) return false;
    std::size_t diff = expected.size() ^ presented.size();
    for (std::size_t i = 0; i < presented.size(); ++i) {
        diff |= static_cast<unsigned char>(presented[i]) ^
                static_cast<unsigned char>(expected[i % expected.size()]);
        // Keeps the compiler from ending the loop early once diff is known to be non-zero.
        __asm__ volatile("" : "+r"(diff));
    }
    return diff == 0;
}

std::optional<std::string_view> parse_bearer(std::string_view v) noexcept {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    constexpr std::string_view scheme = "bearer";
    if (v.size() <= scheme.size() || v[scheme.size()] != ' ') return std::nullopt;
    for (std::size_t i = 0; i < scheme.size(); ++i)
        if (ascii_lower(v[i]) != scheme[i]) return std::nullopt;
    v.remove_prefix(scheme.size());
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    if (v.empty() || v.size() > max_token_length || token_syntax_error(v) != std::string_view::npos)
        return std::nullopt;
    return v;
}

bool bearer_matches(std::string_view expected, std::string_view header_value) noexcept {
    const auto presented = parse_bearer(header_value);
    return presented && tokens_equal(expected, *presented);
}

// ---------------------------------------------------------------------------------------

ip_address ip_address::v4(const std::array<std::uint8_t, 4>& b) noexcept {
    ip_address a;
    a.family = family_t::v4;
    std::copy(b.begin(), b.end(), a.bytes.begin());
    return a;
}

ip_address ip_address::v6(const std::array<std::uint8_t, 16>& b) noexcept {
    ip_address a;
    a.family = family_t::v6;
    a.bytes = b;
    return a;
}

ip_address ip_address::unmapped() const noexcept {
    if (is_v4()) return *this;
    static constexpr std::array<std::uint8_t, 12> mapped_prefix{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (!std::equal(mapped_prefix.begin(), mapped_prefix.end(), bytes.begin())) return *this;
    return v4({bytes[12], bytes[13], bytes[14], bytes[15]});
}

std::string ip_address::to_string() const {
    char buf[INET6_ADDRSTRLEN] = {};
    ::inet_ntop(is_v4() ? AF_INET : AF_INET6, bytes.data(), buf, sizeof buf);
    return buf;
}

std::optional<ip_address> parse_ip_address(std::string_view text) {
    if (text.size() >= 2 && text.front() == '[' && text.back() == ']') text = text.substr(1, text.size() - 2);
    if (const auto pct = text.find('%'); pct != std::string_view::npos && text.find(':') != std::string_view::npos)
        text = text.substr(0, pct);
    if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
    const std::string s(text);
    ip_address a;
    if (s.find(':') == std::string::npos) {
        if (::inet_pton(AF_INET, s.c_str(), a.bytes.data()) != 1) return std::nullopt;
        a.family = ip_address::family_t::v4;
    } else {
        if (::inet_pton(AF_INET6, s.c_str(), a.bytes.data()) != 1) return std::nullopt;
        a.family = ip_address::family_t::v6;
    }
    return a;
}

namespace {

// `a` with every bit after the first `prefix` cleared.
ip_address masked(ip_address a, unsigned prefix) noexcept {
    const unsigned width = a.bit_width();
    for (unsigned bit = prefix; bit < width; ++bit)
        a.bytes[bit / 8] &= static_cast<std::uint8_t>(~(0x80u >> (bit % 8)));
    return a;
}

}  // namespace

bool cidr::contains(const ip_address& address) const noexcept {
    const ip_address a = address.unmapped();
    if (a.family != network.family) return false;
    return masked(a, prefix_length) == network;
}

std::string cidr::to_string() const { return fmt::format("{}/{}", network.to_string(), prefix_length); }

cidr parse_cidr(std::string_view text) {
    const std::string quoted = fmt::format("\"{}\"", text);
    auto fail = [&](const std::string& why) -> core::spec_error {
        return core::spec_error(fmt::format("{} is not a CIDR block: {}", quoted, why));
    };
    if (text.empty()) throw fail("it is empty (write e.g. 10.0.0.0/8 or fd00::/8)");
    const auto slash = text.find('/');
    const std::string_view addr_text = text.substr(0, slash);
    if (addr_text.find('%') != std::string_view::npos)
        throw fail("a zone (%...) has no place in an allow-list; drop it");
    const auto addr = parse_ip_address(addr_text);
    if (!addr || addr_text.front() == '[')
        throw fail(fmt::format("\"{}\" is not an IPv4 or IPv6 address (host names are not resolved)", addr_text));

    cidr c;
    c.network = *addr;
    c.prefix_length = addr->bit_width();
    if (slash != std::string_view::npos) {
        const std::string_view len_text = text.substr(slash + 1);
        unsigned len = 0;
        const auto [p, ec] = std::from_chars(len_text.data(), len_text.data() + len_text.size(), len);
        if (len_text.empty() || ec != std::errc{} || p != len_text.data() + len_text.size() ||
            len > addr->bit_width())
            throw fail(fmt::format("the prefix length of an {} network is 0 to {}", addr->is_v4() ? "IPv4" : "IPv6",
                                   addr->bit_width()));
        c.prefix_length = len;
    }
    if (masked(c.network, c.prefix_length) != c.network) {
        const cidr meant{masked(c.network, c.prefix_length), c.prefix_length};
        throw core::spec_error(fmt::format("{} has host bits set: did you mean {} (or {}/{} for the one address)?",
                                           quoted, meant.to_string(), addr->to_string(), addr->bit_width()));
    }
    // ::ffff:a.b.c.d/96+n is the IPv4 network a.b.c.d/n: store it so, as contains() unmaps.
    if (!c.network.is_v4() && c.prefix_length >= 96 && c.network.unmapped().is_v4())
        return cidr{c.network.unmapped(), c.prefix_length - 96};
    return c;
}

cidr_list::cidr_list(std::span<const std::string> entries) {
    entries_.reserve(entries.size());
    for (const auto& e : entries) entries_.push_back(parse_cidr(e));
}

bool cidr_list::contains(const ip_address& address) const noexcept {
    return std::any_of(entries_.begin(), entries_.end(), [&](const cidr& c) { return c.contains(address); });
}

std::string cidr_list::to_string() const {
    std::string out;
    for (const auto& c : entries_) {
        if (!out.empty()) out += ", ";
        out += c.to_string();
    }
    return out;
}

// ---------------------------------------------------------------------------------------

auth_throttle::auth_throttle(options opt, now_function now) : opt_(opt), now_(std::move(now)) {
    if (opt_.max_clients == 0) throw std::invalid_argument("auth_throttle: max_clients must be at least 1");
    if (opt_.first_delay.count() < 0 || opt_.max_delay.count() < 0 || opt_.forget_after.count() < 0)
        throw std::invalid_argument("auth_throttle: durations must not be negative");
    if (!now_) now_ = &clock::now;
    index_.reserve(std::min<std::size_t>(opt_.max_clients, 4096));
}

std::string auth_throttle::key_of(const ip_address& client) {
    const ip_address a = client.unmapped();
    return std::string(reinterpret_cast<const char*>(a.bytes.data()), a.is_v4() ? 4 : 16);
}

std::chrono::milliseconds auth_throttle::delay_after(unsigned failures) const noexcept {
    if (failures <= opt_.free_failures) return std::chrono::milliseconds(0);
    const unsigned doublings = failures - opt_.free_failures - 1;
    auto d = opt_.first_delay;
    for (unsigned i = 0; i < doublings && d < opt_.max_delay; ++i) d *= 2;
    return std::min(d, opt_.max_delay);
}

auth_throttle::lru_list::iterator auth_throttle::find_live(const std::string& key, clock::time_point now) {
    const auto it = index_.find(key);
    if (it == index_.end()) return lru_.end();
    const auto e = it->second;
    if (now - e->last_failure >= opt_.forget_after && now >= e->blocked_until) {
        lru_.erase(e);
        index_.erase(it);
        return lru_.end();
    }
    return e;
}

std::chrono::milliseconds auth_throttle::retry_after(const ip_address& client) {
    const auto now = now_();
    const std::string key = key_of(client);
    std::lock_guard lock(mutex_);
    const auto e = find_live(key, now);
    if (e == lru_.end() || now >= e->blocked_until) return std::chrono::milliseconds(0);
    // Round up: a client told "0 ms" while still blocked would retry at once.
    return std::chrono::ceil<std::chrono::milliseconds>(e->blocked_until - now);
}

std::chrono::milliseconds auth_throttle::record_failure(const ip_address& client) {
    const auto now = now_();
    std::string key = key_of(client);
    std::lock_guard lock(mutex_);
    auto e = find_live(key, now);
    if (e == lru_.end()) {
        lru_.push_front(entry{key});
        try {
            index_.emplace(std::move(key), lru_.begin());
        } catch (...) {
            lru_.pop_front();
            throw;
        }
        e = lru_.begin();
        while (lru_.size() > opt_.max_clients) {
            index_.erase(lru_.back().key);
            lru_.pop_back();
        }
    } else {
        lru_.splice(lru_.begin(), lru_, e);
    }
    if (e->failures < ~0u) ++e->failures;
    e->last_failure = now;
    const auto delay = delay_after(e->failures);
    e->blocked_until = now + delay;
    return delay;
}

void auth_throttle::record_success(const ip_address& client) {
    const std::string key = key_of(client);
    std::lock_guard lock(mutex_);
    const auto it = index_.find(key);
    if (it == index_.end()) return;
    lru_.erase(it->second);
    index_.erase(it);
}

unsigned auth_throttle::failures(const ip_address& client) {
    const auto now = now_();
    const std::string key = key_of(client);
    std::lock_guard lock(mutex_);
    const auto e = find_live(key, now);
    return e == lru_.end() ? 0 : e->failures;
}

std::size_t auth_throttle::size() const {
    std::lock_guard lock(mutex_);
    return lru_.size();
}

}  // namespace meshperf::daemon
