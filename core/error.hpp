#pragma once
/// Error types of the pure core.
#include <stdexcept>
#include <string>

namespace meshperf::core {

/// A run specification, option or size that is invalid. The message says what is wrong and
/// what to do, and is shown to the user as it is.
class spec_error : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

/// A figure that failed its sanity check (not finite, negative, inconsistent with the bytes
/// moved and the time taken). Never reported as a number.
class insane_figure : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace meshperf::core
