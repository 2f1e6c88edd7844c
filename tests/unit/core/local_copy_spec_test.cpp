// The copy sweep request of `meshperf local HOST` / POST /v1/local (core/local_copy_spec.hpp).
#include "core/error.hpp"
#include "core/local_copy_spec.hpp"
#include "core/sizes.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <string>

namespace local_copy_spec_test {  // one per test file: the unit tests are built in batches (unity build)

using namespace meshperf;
using nlohmann::json;

namespace {

std::string error_of(const json& j) {
    try {
        core::local_copy_spec_from_json(j);
    } catch (const core::spec_error& e) {
        return e.what();
    }
    return "";
}

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

}  // namespace

TEST_CASE("local copy spec: an empty object gives the defaults of meshperf local") {
    const auto s = core::local_copy_spec_from_json(json::object());
    CHECK(s.copies == "h2d,d2h,d2d");
    CHECK(s.sizes == core::parse_size_list("4K..1G"));
    CHECK(s.sizes.front() == 4096);
    CHECK(s.sizes.back() == (1u << 30));
    CHECK(s.device == 0);
    CHECK_FALSE(s.verify);
}

TEST_CASE("local copy spec: string and array forms") {
    const auto a = core::local_copy_spec_from_json(json{{"copies", "h2d,p2p"}, {"sizes", "64M"}, {"device", 3}, {"verify", true}});
    CHECK(a.copies == "h2d,p2p");
    CHECK(a.sizes == std::vector<std::uint64_t>{64u << 20});
    CHECK(a.device == 3);
    CHECK(a.verify);
    const auto b = core::local_copy_spec_from_json(json{{"copies", {"d2h", "d2d"}}, {"sizes", {4096, 1048576}}});
    CHECK(b.copies == "d2h,d2d");
    CHECK(b.sizes == std::vector<std::uint64_t>{4096, 1048576});
    // Out of order or repeated: refused (as POST /v1/runs does), naming the list to send.
    CHECK_THROWS_WITH_AS(core::local_copy_spec_from_json(json{{"sizes", {1048576, 4096, 4096}}}),
                         doctest::Contains("send [4096, 1048576]"), core::spec_error);
    CHECK_THROWS_WITH_AS(core::local_copy_spec_from_json(json{{"sizes", "1M,4K"}}), doctest::Contains("ascending"),
                         core::spec_error);
}

TEST_CASE("local copy spec: JSON round trip") {
    core::local_copy_spec s;
    s.copies = "d2d";
    s.sizes = {1, 4096, 1u << 30};
    s.device = 7;
    s.verify = true;
    const auto back = core::local_copy_spec_from_json(json::parse(core::to_json(s).dump()));
    CHECK(back.copies == s.copies);
    CHECK(back.sizes == s.sizes);
    CHECK(back.device == s.device);
    CHECK(back.verify == s.verify);
}

TEST_CASE("local copy spec: bad input names the field") {
    CHECK(starts_with(error_of(json::array()), "a copy sweep request must be a JSON object"));
    CHECK(starts_with(error_of(json("h2d")), "a copy sweep request must be a JSON object"));
    CHECK(starts_with(error_of({{"copies", 3}}), "field 'copies' must be a string"));
    CHECK(starts_with(error_of({{"copies", json::array()}}), "field 'copies' must be a string"));
    CHECK(starts_with(error_of({{"copies", {"h2d", 1}}}), "field 'copies' must be a string"));
    CHECK(starts_with(error_of({{"copies", ""}}), "field 'copies' is empty"));
    CHECK(error_of({{"copies", "x2y"}}) == "field 'copies': unknown copy 'x2y' in 'x2y': use h2d, d2h, d2d or p2p, comma-separated");
    CHECK(starts_with(error_of({{"copies", {"h2d", "dtoh"}}}), "field 'copies': unknown copy 'dtoh' in 'h2d,dtoh'"));
    CHECK(starts_with(error_of({{"copies", "h2d,,d2h"}}), "field 'copies': unknown copy ''"));
    CHECK(starts_with(error_of({{"copies", "h2d,"}}), "field 'copies': unknown copy ''"));
    CHECK(starts_with(error_of({{"copies", "H2D"}}), "field 'copies': unknown copy 'H2D'"));
    CHECK(error_of({{"copies", "p2p,h2d,h2d,d2d,d2h"}}).empty());  // a repeat is allowed (swept once)
    CHECK(starts_with(error_of({{"sizes", "0"}}), "field 'sizes': "));
    CHECK(starts_with(error_of({{"sizes", {0}}}), "field 'sizes': size 0 is out of range"));
    CHECK(starts_with(error_of({{"sizes", "2G"}}), "field 'sizes': "));
    CHECK(starts_with(error_of({{"sizes", {-5}}}), "field 'sizes': "));
    CHECK(starts_with(error_of({{"sizes", {1.5}}}), "field 'sizes': "));
    CHECK(starts_with(error_of({{"sizes", 4096}}), "field 'sizes': must be a string"));
    CHECK(starts_with(error_of({{"sizes", json::array()}}), "field 'sizes' is empty"));
    CHECK(starts_with(error_of({{"device", -1}}), "field 'device' must be a GPU index 0..1023"));
    CHECK(starts_with(error_of({{"device", 1024}}), "field 'device' must be a GPU index"));
    CHECK(starts_with(error_of({{"device", 1e300}}), "field 'device' must be a GPU index"));
    CHECK(starts_with(error_of({{"device", "0"}}), "field 'device' must be a GPU index"));
    CHECK(starts_with(error_of({{"verify", "yes"}}), "field 'verify' must be true or false"));
    CHECK(starts_with(error_of({{"colour", "blue"}}), "unknown field 'colour'"));
}

TEST_CASE("local copy spec: an absurd size list is refused, a full power-of-two range is not") {
    json many = json::array();
    for (std::uint64_t i = 1; i <= core::max_local_copy_sizes + 1; ++i) many.push_back(i * 4096);
    CHECK(error_of({{"sizes", many}}).find("field 'sizes' lists 65 sizes; a copy sweep takes at most 64") == 0);
    CHECK(core::local_copy_spec_from_json({{"sizes", "1..1G"}}).sizes.size() == 31);
    many.erase(many.end() - 1);
    CHECK(core::local_copy_spec_from_json({{"sizes", many}}).sizes.size() == core::max_local_copy_sizes);
}

TEST_CASE("local copy spec: validate checks what the CLI builds") {
    core::local_copy_spec s;
    s.sizes = {4096};
    CHECK_NOTHROW(core::validate(s));
    s.device = -1;
    CHECK_THROWS_WITH_AS(core::validate(s), doctest::Contains("field 'device'"), core::spec_error);
    s.device = 0;
    s.sizes = {8192, 4096};
    CHECK_THROWS_WITH_AS(core::validate(s), doctest::Contains("ascending and unique"), core::spec_error);
    s.sizes.clear();
    CHECK_THROWS_WITH_AS(core::validate(s), doctest::Contains("field 'sizes' is empty"), core::spec_error);
}

}  // namespace local_copy_spec_test
