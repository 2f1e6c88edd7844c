#include "tests/support/source_dir.hpp"

namespace meshperf::test {

const char* source_dir() { return MESHPERF_SOURCE_DIR; }

}  // namespace meshperf::test
