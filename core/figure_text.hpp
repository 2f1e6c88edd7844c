#pragma once
/// Numbers for people: rates and other figures with a fixed count of significant digits, so
/// a small figure is never printed as 0.00 (1 B at 1.23e-4 Gbit/s reads "0.000123"), and
/// never in scientific notation. One rule for the text tables, the HTML report, the CSVs and
/// the analysis's messages.
#include <string>

namespace meshperf::core {

/// `v` with `digits` significant digits in fixed notation: 9.41, 94.1, 941, 0.000123;
/// values of 10^digits and more keep all their integer digits (1234). 0 is "0". A value
/// that is not finite gives `not_finite`.
std::string significant_text(double v, int digits = 3, const std::string& not_finite = "-");

/// What printf's %.{digits}g gives, in fixed notation: `digits` significant digits, trailing
/// zeros dropped (2.5, 0.000123, 292500, 2288330), never an exponent. The drop-in for
/// "{:.4g}" and "{:g}" (6 digits) wherever people read the number, and in CSV. A value that
/// is not finite gives `not_finite`.
std::string plain_number(double v, int digits = 6, const std::string& not_finite = "-");

/// A figure inside a sentence (a check's reason, an outlier's why): whole numbers from 100,
/// one decimal from 10, two from 1, three significant digits below (9.41, 23.1, 412,
/// 0.000123), never an exponent. Gbit/s, µs and ratios alike.
std::string message_figure(double v);

}  // namespace meshperf::core
