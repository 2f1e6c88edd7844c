#pragma once
// The source tree's root, for tests that read shipped files (the example config, docs).

namespace meshperf::test {

/// The absolute path of the source tree this test binary was configured from.
/// Defined in source_dir.cpp, the one translation unit that carries the path, so that the
/// other test sources compile to the same bytes in any checkout (ccache hits across folders).
const char* source_dir();

}  // namespace meshperf::test
