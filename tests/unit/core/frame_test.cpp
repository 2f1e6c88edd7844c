#include "core/frame.hpp"

#include <algorithm>
#include <cstdint>
#include <doctest/doctest.h>
#include <memory>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace frame_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf::core;

namespace {

constexpr frame_type all_types[] = {frame_type::hello,      frame_type::hello_ok,  frame_type::point_begin, frame_type::point_ready,
                                    frame_type::progress,   frame_type::point_stop, frame_type::point_done, frame_type::error,
                                    frame_type::bye,        frame_type::endpoint,   frame_type::point_go,
                                    frame_type::heartbeat};

decoded_frame decode(const std::string& bytes) { return decode_frame(std::span<const char>(bytes.data(), bytes.size())); }
decoded_frame decode(const std::string& bytes, std::size_t n) { return decode_frame(std::span<const char>(bytes.data(), n)); }

/// A header with the given fields, for frames the encoder would never write.
std::string header(std::uint16_t type, std::uint16_t reserved, std::uint32_t length, const char* magic = "MPF1") {
    std::string h(magic, 4);
    h += static_cast<char>(type >> 8);
    h += static_cast<char>(type & 0xff);
    h += static_cast<char>(reserved >> 8);
    h += static_cast<char>(reserved & 0xff);
    for (int i = 3; i >= 0; --i) h += static_cast<char>((length >> (8 * i)) & 0xff);
    return h;
}

/// The invariants every decode result must keep, whatever the input.
void check_invariants(const decoded_frame& f, std::span<const char> in) {
    switch (f.status) {
        case decode_status::ok: {
            REQUIRE(f.consumed >= frame_header_size);
            REQUIRE(f.consumed <= in.size());
            REQUIRE(f.payload.size() == f.consumed - frame_header_size);
            REQUIRE(f.payload.size() <= max_frame_payload);
            // The payload lies inside the input.
            REQUIRE(f.payload.data() == in.data() + frame_header_size);
            CHECK(f.error.empty());
            break;
        }
        case decode_status::need_more:
            REQUIRE(f.consumed == 0);
            CHECK(f.error.empty());
            break;
        case decode_status::bad:
            REQUIRE(f.consumed == 0);
            CHECK_FALSE(f.error.empty());
            break;
    }
}

}  // namespace

TEST_SUITE("frame") {

TEST_CASE("encode: header layout is big-endian with the magic first") {
    const auto bytes = encode_frame(frame_type::point_done, "{\"a\":1}");
    REQUIRE(bytes.size() == frame_header_size + 7);
    CHECK(bytes.substr(0, 4) == "MPF1");
    CHECK(bytes[4] == 0);
    CHECK(bytes[5] == 7);  // point_done
    CHECK(bytes[6] == 0);
    CHECK(bytes[7] == 0);
    CHECK(bytes.substr(8, 4) == std::string("\0\0\0\x07", 4));
    CHECK(bytes.substr(12) == "{\"a\":1}");
}

TEST_CASE("encode/decode round trip for every frame type") {
    for (auto t : all_types) {
        CAPTURE(frame_type_name(static_cast<std::uint16_t>(t)));
        for (const std::string& payload : {std::string(), std::string("{}"), std::string("{\"spec\":{\"peer\":\"n:1\"}}"),
                                          std::string(1000, 'x'), std::string("\0\xff\x80", 3)}) {
            const auto bytes = encode_frame(t, payload);
            const auto f = decode(bytes);
            REQUIRE(f.status == decode_status::ok);
            CHECK(f.type == static_cast<std::uint16_t>(t));
            CHECK(f.payload == payload);
            CHECK(f.consumed == bytes.size());
            check_invariants(f, bytes);
        }
    }
}

TEST_CASE("frame type names") {
    CHECK(frame_type_name(1) == "hello");
    CHECK(frame_type_name(2) == "hello_ok");
    CHECK(frame_type_name(7) == "point_done");
    CHECK(frame_type_name(10) == "endpoint");
    CHECK(frame_type_name(11) == "point_go");
    CHECK(frame_type_name(12) == "heartbeat");
    // Every named type has its own name; the values are part of the protocol.
    for (auto t : all_types) CHECK(frame_type_name(static_cast<std::uint16_t>(t)).rfind("type ", 0) == std::string::npos);
    CHECK(frame_type_name(0) == "type 0");
    CHECK(frame_type_name(13) == "type 13");
    CHECK(frame_type_name(77) == "type 77");
    CHECK(frame_type_name(65535) == "type 65535");
}

TEST_CASE("the largest payload round trips; one byte more is refused by the encoder") {
    const std::string big(max_frame_payload, 'z');
    const auto bytes = encode_frame(frame_type::progress, big);
    const auto f = decode(bytes);
    REQUIRE(f.status == decode_status::ok);
    CHECK(f.payload.size() == max_frame_payload);
    CHECK_THROWS_AS(encode_frame(frame_type::progress, std::string(max_frame_payload + 1, 'z')), std::length_error);
}

TEST_CASE("every proper prefix of a valid frame is need_more") {
    for (const std::string& payload : {std::string(), std::string("{\"t_s\":0.5,\"bytes\":[1,2,3]}")}) {
        const auto bytes = encode_frame(frame_type::progress, payload);
        for (std::size_t n = 0; n < bytes.size(); ++n) {
            CAPTURE(n);
            const auto f = decode(bytes, n);
            CHECK(f.status == decode_status::need_more);
            check_invariants(f, std::span<const char>(bytes.data(), n));
        }
        CHECK(decode(bytes).status == decode_status::ok);
    }
}

TEST_CASE("two frames back to back decode one after the other") {
    const auto a = encode_frame(frame_type::hello, "{\"protocol\":1}");
    const auto b = encode_frame(frame_type::bye, "{}");
    const std::string both = a + b;
    const auto f1 = decode(both);
    REQUIRE(f1.status == decode_status::ok);
    CHECK(f1.type == static_cast<std::uint16_t>(frame_type::hello));
    CHECK(f1.payload == "{\"protocol\":1}");
    CHECK(f1.consumed == a.size());
    const std::string rest = both.substr(f1.consumed);
    const auto f2 = decode(rest);
    REQUIRE(f2.status == decode_status::ok);
    CHECK(f2.type == static_cast<std::uint16_t>(frame_type::bye));
    CHECK(f2.payload == "{}");
    CHECK(f2.consumed == rest.size());
    // A frame followed by part of the next: the first decodes, the rest needs more.
    const std::string partial = a + b.substr(0, 5);
    const auto g = decode(partial);
    REQUIRE(g.status == decode_status::ok);
    CHECK(decode(partial.substr(g.consumed)).status == decode_status::need_more);
}

TEST_CASE("garbage is recognised at its first byte") {
    CHECK(decode(std::string("G")).status == decode_status::bad);              // "GET / HTTP/1.1" sent to a session
    CHECK(decode(std::string("GET / HTTP/1.1\r\n")).status == decode_status::bad);
    CHECK(decode(std::string("\x16\x03\x01", 3)).status == decode_status::bad);  // a TLS ClientHello
    CHECK(decode(std::string(1, '\0')).status == decode_status::bad);
    const auto f = decode(std::string("X"));
    CHECK(f.error.find("magic") != std::string::npos);
    check_invariants(f, std::span<const char>("X", 1));
}

TEST_CASE("a wrong magic is detected on a partial header") {
    CHECK(decode(std::string("M")).status == decode_status::need_more);
    CHECK(decode(std::string("MP")).status == decode_status::need_more);
    CHECK(decode(std::string("MPF")).status == decode_status::need_more);
    CHECK(decode(std::string("MPX")).status == decode_status::bad);
    CHECK(decode(std::string("MPF2")).status == decode_status::bad);
    CHECK(decode(std::string("mpf1")).status == decode_status::bad);
    // A full header with the wrong magic and a valid-looking rest is still bad.
    CHECK(decode(header(1, 0, 0, "MPF0")).status == decode_status::bad);
}

TEST_CASE("a non-zero reserved field is bad as soon as it is seen") {
    for (std::uint16_t reserved : {std::uint16_t{1}, std::uint16_t{0x100}, std::uint16_t{0xffff}}) {
        CAPTURE(reserved);
        const auto h = header(1, reserved, 2) + "{}";
        const auto whole = decode(h);
        CHECK(whole.status == decode_status::bad);
        CHECK(whole.error.find("reserved") != std::string::npos);
        CHECK(decode(h, 8).status == decode_status::bad);  // before the length arrives
    }
    // Only the high byte seen so far (zero): not yet decidable.
    CHECK(decode(header(1, 1, 2), 7).status == decode_status::need_more);
}

TEST_CASE("an oversized length is bad before any payload arrives") {
    const auto h = header(1, 0, max_frame_payload + 1);
    const auto f = decode(h);
    CHECK(f.status == decode_status::bad);
    CHECK(f.error.find("exceeds") != std::string::npos);
    CHECK(decode(header(1, 0, 0xffffffffu)).status == decode_status::bad);
    // Exactly the limit is fine, and needs its payload.
    CHECK(decode(header(1, 0, max_frame_payload)).status == decode_status::need_more);
}

TEST_CASE("a truncated payload needs more, never ok") {
    const auto bytes = encode_frame(frame_type::point_begin, "{\"index\":1,\"size\":64}");
    for (std::size_t cut = 1; cut <= bytes.size() - frame_header_size; ++cut) {
        CAPTURE(cut);
        const auto f = decode(bytes, bytes.size() - cut);
        CHECK(f.status == decode_status::need_more);
    }
}

TEST_CASE("unknown frame types decode as ok; the caller names them") {
    const auto h = header(77, 0, 2) + "{}";
    const auto f = decode(h);
    REQUIRE(f.status == decode_status::ok);
    CHECK(f.type == 77);
    CHECK(frame_type_name(f.type) == "type 77");
}

TEST_CASE("fuzz: random and mutated input never reads out of bounds nor over-consumes") {
    std::mt19937_64 rng(0x6d657368);  // fixed seed: reproducible
    const auto valid = encode_frame(frame_type::point_done, "{\"cpu_s\":0.1,\"wall_s\":1.0,\"error\":\"\"}");
    std::size_t ok = 0, bad = 0, more = 0;
    for (int iter = 0; iter < 20'000; ++iter) {
        std::vector<char> buf;
        switch (iter % 4) {
            case 0: {  // pure noise
                buf.resize(rng() % 64);
                for (auto& c : buf) c = static_cast<char>(rng());
                break;
            }
            case 1: {  // the right magic, then noise
                buf = {'M', 'P', 'F', '1'};
                const auto extra = rng() % 48;
                for (std::size_t i = 0; i < extra; ++i) buf.push_back(static_cast<char>(rng()));
                break;
            }
            case 2: {  // a valid frame with a few bytes flipped, maybe truncated or extended
                buf.assign(valid.begin(), valid.end());
                for (int k = 0; k < 1 + static_cast<int>(rng() % 3); ++k) buf[rng() % buf.size()] ^= static_cast<char>(1 + rng() % 255);
                if (rng() % 2) buf.resize(rng() % (buf.size() + 1));
                else for (int k = 0; k < static_cast<int>(rng() % 16); ++k) buf.push_back(static_cast<char>(rng()));
                break;
            }
            default: {  // a plausible header with a small random length and type, payload maybe short
                const auto len = static_cast<std::uint32_t>(rng() % 40);
                const auto h = header(static_cast<std::uint16_t>(rng()), 0, len);
                buf.assign(h.begin(), h.end());
                const auto have = rng() % (len + 8);
                for (std::size_t i = 0; i < have; ++i) buf.push_back(static_cast<char>(rng()));
                break;
            }
        }
        // Decode from an exactly-sized heap copy, so a read past the end is a real overrun
        // (caught by ASan builds) rather than a read into spare capacity.
        std::unique_ptr<char[]> exact(new char[buf.size() ? buf.size() : 1]);
        std::copy(buf.begin(), buf.end(), exact.get());
        const std::span<const char> in(exact.get(), buf.size());
        const auto f = decode_frame(in);
        check_invariants(f, in);
        if (f.status == decode_status::ok) {
            ++ok;
            // An ok frame re-encodes to exactly the bytes it consumed (reserved is zero).
            CHECK(encode_frame(static_cast<frame_type>(f.type), f.payload) == std::string(in.data(), f.consumed));
        } else if (f.status == decode_status::bad) {
            ++bad;
        } else {
            ++more;
        }
    }
    // The generator reaches every outcome.
    CHECK(ok > 100);
    CHECK(bad > 100);
    CHECK(more > 100);
}

}  // TEST_SUITE

}  // namespace frame_test
