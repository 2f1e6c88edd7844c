/// Fuzz target: the TOML loaders, meshperfd's configuration (daemon::parse_config, what
/// --config reads) and the node manifest (node::parse_manifest: inspect --expect, the
/// daemon's [inspect] manifest). Both parse with cpptoml, which recurses, behind the nesting
/// bound of core/toml_nesting.hpp (issue 47, item 11). Any input may only end in
/// core::spec_error: the daemon and the CLI say what is wrong and exit 2.
#include "core/error.hpp"
#include "daemon/runtime/config.hpp"
#include "node/manifest.hpp"
#include "tests/fuzz/fuzz_checks.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        (void)meshperf::daemon::parse_config(text, "fuzz.toml");
    } catch (const meshperf::core::spec_error&) {
    }
    try {
        (void)meshperf::node::parse_manifest(text, "fuzz.toml");
    } catch (const meshperf::core::spec_error&) {
    }
    return 0;
}
