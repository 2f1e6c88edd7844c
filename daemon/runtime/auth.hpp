#pragma once
/// Authentication building blocks of meshperfd: the cluster token (file loading, constant-time
/// comparison, the `Authorization: Bearer` header), a limiter that slows down clients that
/// fail to authenticate, and the CIDR allow-list of peers.
///
/// No I/O beyond reading the token file, no Asio: the HTTP server and the peer session call
/// these with what they parsed. Error messages never contain a token.
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <unordered_map>
#include <vector>

namespace meshperf::daemon {

// ---------------------------------------------------------------------------------------
// Cluster token

/// Longest token accepted, in characters (`openssl rand -hex 32` makes 64).
inline constexpr std::size_t max_token_length = 1024;

/// Value of the WWW-Authenticate header of a 401 answer (RFC 6750).
inline constexpr std::string_view www_authenticate_challenge = R"(Bearer realm="meshperf")";

/// Reads the cluster token from `path`, refusing what ssh would refuse of a private key:
/// - a file that group or others may read or write: core::spec_error
///   "token file /etc/meshperf/token is readable by others (mode 0644): chmod 600 it";
/// - something that is not a regular file, an empty file (after trimming), a file of more
///   than one line or longer than max_token_length, a character outside the RFC 6750
///   token alphabet (letters, digits, - . _ ~ + / and trailing =): core::spec_error saying
///   what to do;
/// - a file that cannot be opened or read: std::system_error naming the operation and the
///   path ("open token file /etc/meshperf/token as user meshperf ...: Permission denied").
/// Trailing whitespace (the newline an editor or `echo` adds, CR LF) is trimmed.
/// Returns the token. Called once at startup (and on reload), from any thread.
std::string load_token_file(const std::filesystem::path& path);

/// The message load_token_file gives for a file of this mode (st_mode permission bits), or
/// std::nullopt when the mode is acceptable (no group or other permission bits).
std::optional<std::string> token_file_mode_problem(const std::string& path, mode_t mode);

/// Checks the text of a token file and returns the token (trailing whitespace trimmed).
/// Throws core::spec_error as load_token_file does; `path` is only used in messages.
std::string parse_token_text(std::string_view text, const std::string& path);

/// True when `c` may appear in a bearer token (RFC 6750 b64token, without the padding).
bool is_token_char(char c) noexcept;

/// Compares a presented token with the expected one in time that depends only on the
/// length of `presented`, never on where the two differ. An empty `expected` matches
/// nothing.
bool tokens_equal(std::string_view expected, std::string_view presented) noexcept;

/// Extracts the token from an Authorization header value ("Bearer <token>"; the scheme is
/// case-insensitive, surrounding spaces are ignored). Returns a view into `header_value`,
/// or std::nullopt when the value is not a well-formed bearer credential.
std::optional<std::string_view> parse_bearer(std::string_view header_value) noexcept;

/// parse_bearer + tokens_equal: whether this Authorization header value carries `expected`.
bool bearer_matches(std::string_view expected, std::string_view header_value) noexcept;

// ---------------------------------------------------------------------------------------
// Addresses and CIDR blocks

/// An IPv4 or IPv6 address (no port, no zone). IPv4 uses bytes[0..3], network byte order.
struct ip_address {
    enum class family_t : std::uint8_t { v4, v6 };
    family_t family = family_t::v4;
    std::array<std::uint8_t, 16> bytes{};

    static ip_address v4(const std::array<std::uint8_t, 4>& b) noexcept;
    static ip_address v6(const std::array<std::uint8_t, 16>& b) noexcept;

    bool is_v4() const noexcept { return family == family_t::v4; }
    /// Length of the address in bits: 32 or 128.
    unsigned bit_width() const noexcept { return is_v4() ? 32 : 128; }
    /// An IPv4-mapped IPv6 address (::ffff:10.1.2.3, what a dual-stack socket reports for an
    /// IPv4 client) as the IPv4 address it carries; any other address unchanged.
    ip_address unmapped() const noexcept;
    /// "10.1.2.3", "fd00::1".
    std::string to_string() const;

    friend bool operator==(const ip_address&, const ip_address&) = default;
};

/// Parses "10.1.2.3", "fd00::1" or "[fd00::1]"; an IPv6 zone ("fe80::1%eth0") is dropped.
/// Returns std::nullopt for anything else (host names included: nothing is resolved).
std::optional<ip_address> parse_ip_address(std::string_view text);

/// A network: an address and a prefix length.
struct cidr {
    ip_address network;        ///< host bits are zero
    unsigned prefix_length = 0;  ///< 0..32 for IPv4, 0..128 for IPv6

    /// Whether `address` lies in this network. IPv4-mapped IPv6 addresses match IPv4
    /// networks; IPv4 addresses never match IPv6 networks otherwise.
    bool contains(const ip_address& address) const noexcept;
    /// "10.0.0.0/8", "fd00::/8".
    std::string to_string() const;

    friend bool operator==(const cidr&, const cidr&) = default;
};

/// Parses "10.0.0.0/8", "fd00::/8", or a single address ("10.0.0.7" = /32, "fd00::7" =
/// /128). "::ffff:10.0.0.0/104" is read as 10.0.0.0/8. Throws core::spec_error with a
/// message naming the entry and what is wrong: a bad address or prefix length, host bits
/// set ("did you mean 10.0.0.0/8?"), a zone.
cidr parse_cidr(std::string_view text);

/// An allow-list of networks. An empty list contains nothing: what an absent list means
/// (allow all, or loopback only) is the caller's policy.
class cidr_list {
public:
    cidr_list() = default;
    /// Parses each entry with parse_cidr; throws core::spec_error naming the first bad one.
    explicit cidr_list(std::span<const std::string> entries);

    /// Whether any network contains `address`.
    bool contains(const ip_address& address) const noexcept;
    bool empty() const noexcept { return entries_.empty(); }
    const std::vector<cidr>& entries() const noexcept { return entries_; }
    /// "10.0.0.0/8, fd00::/8" (for /v1/info and messages).
    std::string to_string() const;

private:
    std::vector<cidr> entries_;
};

// ---------------------------------------------------------------------------------------
// Failed-authentication limiter

/// Settings of auth_throttle.
struct auth_throttle_options {
    std::size_t max_clients = 4096;              ///< addresses remembered at most (≥ 1)
    unsigned free_failures = 3;                  ///< failures in a row before any wait
    std::chrono::milliseconds first_delay{1000};  ///< wait after the first failure beyond those
    std::chrono::milliseconds max_delay{60'000};  ///< cap of the doubling wait
    std::chrono::milliseconds forget_after{15 * 60'000};  ///< quiet time that resets an address
};

/// Slows down clients that present bad credentials: after `free_failures` failures in a row
/// from one address, that address must wait before it may try again, and the wait doubles
/// with each further failure up to `max_delay`. Memory is bounded: at most `max_clients`
/// addresses are remembered, the least recently failed forgotten first, and an address that
/// has not failed for `forget_after` starts afresh.
///
/// Addresses are keyed whole (IPv4-mapped IPv6 as IPv4); IPv6 is deliberately not grouped
/// by /64, because a cluster's nodes commonly share one /64 and one misconfigured node must
/// not lock out its neighbours.
///
/// Use: before checking a request's token, `retry_after(client)`; if non-zero, answer
/// 429 Too Many Requests with Retry-After and do not check the token. Otherwise check it and
/// call record_failure() or record_success(). Thread-safe (one internal mutex).
class auth_throttle {
public:
    using clock = std::chrono::steady_clock;
    using now_function = std::function<clock::time_point()>;

    using options = auth_throttle_options;

    /// `now` is the clock (tests inject a manual one). Throws std::invalid_argument when
    /// max_clients is 0 or a duration is negative.
    explicit auth_throttle(options opt = {}, now_function now = &clock::now);

    /// Zero when `client` may present credentials now; otherwise how long it must wait
    /// (send it as Retry-After, rounded up to whole seconds).
    std::chrono::milliseconds retry_after(const ip_address& client);
    /// Records one failed authentication by `client`; returns the wait now imposed on it
    /// (zero while it is within free_failures).
    std::chrono::milliseconds record_failure(const ip_address& client);
    /// A successful authentication forgets the client's failures.
    void record_success(const ip_address& client);
    /// Failures in a row recorded for `client` (0 when unknown or forgotten).
    unsigned failures(const ip_address& client);
    /// Addresses remembered now (≤ max_clients).
    std::size_t size() const;
    /// The wait after `failures` failures in a row, under these options.
    std::chrono::milliseconds delay_after(unsigned failures) const noexcept;

private:
    struct entry {
        std::string key;
        unsigned failures = 0;
        clock::time_point last_failure{};
        clock::time_point blocked_until{};
    };
    using lru_list = std::list<entry>;  // front: most recently failed

    static std::string key_of(const ip_address& client);
    // Returns the entry of `key`, dropping it first if it has been quiet for forget_after.
    lru_list::iterator find_live(const std::string& key, clock::time_point now);

    options opt_;
    now_function now_;
    mutable std::mutex mutex_;
    lru_list lru_;
    std::unordered_map<std::string, lru_list::iterator> index_;
};

}  // namespace meshperf::daemon
