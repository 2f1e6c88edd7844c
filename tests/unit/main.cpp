// The doctest main of the unit-test binary; test cases live in <component>_test.cpp.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
