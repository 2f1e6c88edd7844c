// Issue 47 item 11: TOML nested deeper than meshperf's files ever do is refused before
// cpptoml, which recurses, can overflow the stack (30,000 nested inline tables, 100,000
// nested arrays killed `meshperf inspect --expect` and `meshperfd --config` with SIGSEGV).
#include "core/error.hpp"
#include "core/toml_nesting.hpp"
#include "daemon/runtime/config.hpp"
#include "node/manifest.hpp"

#include <doctest/doctest.h>

#include <string>

namespace toml_nesting_test {  // one per test file: the unit tests are built in batches (unity build)

using meshperf::core::check_toml_nesting;
using meshperf::core::spec_error;

std::string nested(std::size_t depth, char open, char close, const std::string& inner) {
    return std::string(depth, open) + inner + std::string(depth, close);
}

TEST_SUITE("toml_nesting") {

TEST_CASE("ordinary files pass, strings and comments do not count") {
    CHECK_NOTHROW(check_toml_nesting("[daemon]\nlisten = \"0.0.0.0:7470\"\n[[x.y]]\na = [[1, 2], [3]]\nb = {c = {d = 1}}\n", "f"));
    CHECK_NOTHROW(check_toml_nesting("a = \"" + std::string(1000, '[') + "\" # " + std::string(1000, '{') + "\n", "f"));
    CHECK_NOTHROW(check_toml_nesting("a = '''" + std::string(1000, '[') + "\n" + std::string(1000, '.') + "'''\n", "f"));
    CHECK_NOTHROW(check_toml_nesting("a = \"\"\"x\\\"\"\"" + std::string(100, '.') + "\"\"\"\n", "f"));
    CHECK_NOTHROW(check_toml_nesting("a = " + nested(64, '[', ']', "1") + "\n", "f"));
    CHECK_NOTHROW(check_toml_nesting("a = 1.5\nb = 1979-05-27T07:32:00.999\n", "f"));
}

TEST_CASE("too deep: arrays, inline tables, dotted keys, each with the line") {
    CHECK_THROWS_WITH_AS(check_toml_nesting("\n\na = " + nested(65, '[', ']', "1"), "node.toml"),
                         doctest::Contains("node.toml: line 3: arrays and inline tables nested deeper than 64"), spec_error);
    std::string tables = "a = ";
    for (int i = 0; i < 30000; ++i) tables += "{b = ";
    CHECK_THROWS_AS(check_toml_nesting(tables, "f"), spec_error);
    std::string dotted;
    for (int i = 0; i < 100000; ++i) dotted += "a.";
    CHECK_THROWS_WITH_AS(check_toml_nesting(dotted + "b = 1\n", "f"), doctest::Contains("a dotted key with more than 64 parts"),
                         spec_error);
    CHECK_THROWS_AS(check_toml_nesting("[" + dotted + "b]\n", "f"), spec_error);
}

TEST_CASE("the config and the manifest refuse deep files with a spec_error, no crash") {
    const auto arrays = "[daemon]\nlisten = " + nested(100000, '[', ']', "1") + "\n";
    CHECK_THROWS_WITH_AS(meshperf::daemon::parse_config(arrays, "meshperfd.toml"),
                         doctest::Contains("meshperfd.toml: line 2: arrays and inline tables nested deeper than 64"), spec_error);
    std::string tables = "gpus = ";
    for (int i = 0; i < 30000; ++i) tables += "{a = ";
    tables += "1" + std::string(30000, '}') + "\n";
    CHECK_THROWS_WITH_AS(meshperf::node::parse_manifest(tables, "node.toml"),
                         doctest::Contains("node.toml: line 1: arrays and inline tables nested deeper than 64"), spec_error);
}

}  // TEST_SUITE

}  // namespace toml_nesting_test
