// Boost's assertion handler in the sanitizer builds (BOOST_ENABLE_ASSERT_HANDLER, set by
// cmake/warnings.cmake for every target there). A failed BOOST_ASSERT aborts with the usual
// message, as without the handler, except for one assertion known to be wrong in Boost
// 1.81's Beast: basic_parser::parse_chunk_header asserts `n >= 5` where 3 or 4 bytes are
// legal (the final chunk's "0\r\n" has arrived and the rest of the message has not); the
// code after it answers need_more correctly. Beast fixed the assertion upstream
// (boostorg/beast pull request 2861, 2024). The fuzzer reaches it by feeding a chunked
// request a byte at a time, as a slow client would. Release builds define NDEBUG, so the
// daemon never evaluates it.
#include <boost/assert.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace boost {

void assertion_failed(char const* expr, char const* function, char const* file, long line) {
    if (std::strcmp(expr, "n >= 5") == 0 && std::strstr(file, "beast/http/impl/basic_parser.ipp") != nullptr) return;
    std::fprintf(stderr, "%s:%ld: %s: Assertion `%s' failed.\n", file, line, function, expr);
    std::abort();
}

void assertion_failed_msg(char const* expr, char const* msg, char const* function, char const* file, long line) {
    std::fprintf(stderr, "%s:%ld: %s: Assertion `%s' failed: %s\n", file, line, function, expr, msg);
    std::abort();
}

}  // namespace boost
