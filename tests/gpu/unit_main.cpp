// The doctest main of meshperf_gpu_unit_tests (tests of gpu/ that need no GPU).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
