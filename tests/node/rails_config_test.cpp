// The daemon configuration's [rails] table: include / exclude glob arrays, parsed as
// strictly as the rest of the file, and the shipped example's (empty: the default rule).
#include "tests/support/source_dir.hpp"
#include "core/error.hpp"
#include "daemon/runtime/config.hpp"

#include <doctest/doctest.h>
#include <fstream>
#include <sstream>

using meshperf::daemon::parse_config;

TEST_CASE("config [rails]: include and exclude patterns") {
    const auto c = parse_config("[rails]\ninclude = [\"enp*np0\", \"mlx5_*\"]\nexclude = [\"mlx5_bond0\"]\n", "x.toml");
    CHECK(c.rails.include == std::vector<std::string>{"enp*np0", "mlx5_*"});
    CHECK(c.rails.exclude == std::vector<std::string>{"mlx5_bond0"});
    CHECK(parse_config("", "x.toml").rails.include.empty());
}

TEST_CASE("config [rails]: bad patterns and keys are refused naming them") {
    CHECK_THROWS_WITH_AS(parse_config("[rails]\ninclude = [\"enp 1\"]\n", "x.toml"),
                         doctest::Contains("x.toml: [rails] include: \"enp 1\" is not an interface name pattern"),
                         meshperf::core::spec_error);
    CHECK_THROWS_WITH_AS(parse_config("[rails]\nexclude = [\"\"]\n", "x.toml"), doctest::Contains("[rails] exclude"),
                         meshperf::core::spec_error);
    CHECK_THROWS_WITH_AS(parse_config("[rails]\ninclude = \"enp*\"\n", "x.toml"),
                         doctest::Contains("must be an array of strings"), meshperf::core::spec_error);
    CHECK_THROWS_WITH_AS(parse_config("[rails]\nincludes = []\n", "x.toml"),
                         doctest::Contains("unknown key 'includes' in [rails] (known: include, exclude)"),
                         meshperf::core::spec_error);
}

TEST_CASE("config [rails]: the shipped example keeps the default rule") {
    std::ifstream in(std::string(meshperf::test::source_dir()) + "/systemd/meshperfd.toml.example");
    REQUIRE(in);
    std::ostringstream text;
    text << in.rdbuf();
    const auto c = parse_config(text.str(), "meshperfd.toml.example");
    CHECK(c.rails.include.empty());
    CHECK(c.rails.exclude.empty());
}
