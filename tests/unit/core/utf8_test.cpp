#include "core/utf8.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <string>

namespace utf8_test {

using meshperf::core::is_valid_utf8;
using meshperf::core::to_valid_utf8;

TEST_CASE("valid UTF-8 passes unchanged") {
    for (const std::string& s : {std::string(), std::string("plain ascii"), std::string("caf\xC3\xA9"),
                                std::string("\xE2\x82\xAC 100"), std::string("\xF0\x9F\x98\x80"),
                                std::string("nul \0 inside", 12), std::string("\xF4\x8F\xBF\xBF")}) {
        CHECK(is_valid_utf8(s));
        CHECK(to_valid_utf8(s) == s);
    }
}

TEST_CASE("each bad byte becomes one U+FFFD and the rest is kept") {
    // A peer's status line as in issue 25: "404 \xe9t\xe9" (Latin-1 "été").
    CHECK_FALSE(is_valid_utf8("404 \xe9t\xe9"));
    CHECK(to_valid_utf8("404 \xe9t\xe9") == "404 \xEF\xBF\xBDt\xEF\xBF\xBD");
    CHECK(to_valid_utf8("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong '/'
    CHECK(to_valid_utf8("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
    CHECK(to_valid_utf8("\xF4\x90\x80\x80").size() == 12);                           // above U+10FFFF
    CHECK(to_valid_utf8("ok\xE2\x82") == "ok\xEF\xBF\xBD\xEF\xBF\xBD");                // truncated at the end
    CHECK(to_valid_utf8("\xFF\xFEx") == "\xEF\xBF\xBD\xEF\xBF\xBDx");
}

TEST_CASE("whatever the bytes, the repaired text dumps as JSON") {
    std::string all;
    for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
    for (int b = 0; b < 256; ++b) all += std::string("\xE0") + static_cast<char>(b);
    const auto fixed = to_valid_utf8(all);
    CHECK(is_valid_utf8(fixed));
    CHECK_THROWS(nlohmann::json(all).dump());
    CHECK_NOTHROW(nlohmann::json(fixed).dump());
}

}  // namespace utf8_test
