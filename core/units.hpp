#pragma once
/// Bytes, bit rates and their formatting: the one place a Gbit/s, a GB/s or a bit/s is
/// computed from bytes and seconds (or back) and printed with its unit. Gbit/s = 10^9 bit/s,
/// GB/s = 10^9 byte/s (nccl-tests' unit), as the results, the tables and the metrics say;
/// sizes are bytes and print in IEC units (core/sizes.hpp: format_size).
///
/// Two roundings of one conversion. A rate in Gbit/s can be computed as bytes × 8 / 10^9
/// (× 8 is exact, so the result is the quotient rounded once) or as bytes × 8e-9 (the
/// factor 8e-9 is itself rounded, so the product can differ in the last bit: 3 × 8 / 1e9 is
/// 2.4e-08, 3 × 8e-9 is 2.4000000000000003e-08). Both have been in meshperf since its first
/// results, and each figure is stored (SQLite, result files) and printed (JSON with 17
/// digits) as its form computed it, so each caller keeps its form and both are here:
///
/// - the plain names (gbit_per_s, gbit_from_bytes_per_s, gbyte_per_s, ...) divide by 10^9:
///   the measured figures (the daemon's flow figures, the result checks, collective
///   results, copy sweeps) and the curves plotted against them;
/// - the names ending in `_by_factor` multiply by 8e-9 or 1e-9 (and divide by 8e-9 to come
///   back): the α–β model's β, the predictions made from it, the rate the model reads
///   from its samples, and the block means of a flow's precision
///   (flow_tracker::block_gbit_per_s, the `block_values` of a bandwidth point).
///
/// Moving a caller from one form to the other changes its outputs; a new caller takes the
/// plain form. Where the order of operations is said (bytes × 8 / seconds / 10^9), it is
/// the order evaluated. What is exact: × 8 and ÷ 8 (a power of two), so bytes × 8 /
/// seconds equals (bytes / seconds) × 8 and gbit_per_s(b, s) equals
/// gbit_from_bytes_per_s(b / s) bit for bit; 10^9 and 1.25·10^8 are exact doubles.
#include <string>

namespace meshperf::core {

inline constexpr double bits_per_byte = 8;
/// The "G" of Gbit/s and GB/s (decimal, as network rates are).
inline constexpr double giga = 1e9;
/// Bytes per second in one Gbit/s: 10^9 / 8 (exact).
inline constexpr double bytes_per_s_per_gbit_per_s = giga / bits_per_byte;

// ---- Measured figures: × 8, then ÷ 10^9 -------------------------------------------------

/// Goodput of `bytes` moved in `seconds`, Gbit/s: bytes × 8 / seconds / 10^9.
constexpr double gbit_per_s(double bytes, double seconds) { return bytes * 8.0 / seconds / 1e9; }
/// A rate in bytes/s as Gbit/s: bytes_per_s × 8 / 10^9.
constexpr double gbit_from_bytes_per_s(double bytes_per_s) { return bytes_per_s * 8.0 / 1e9; }
/// `bytes` moved in `seconds`, GB/s: bytes / seconds / 10^9.
constexpr double gbyte_per_s(double bytes, double seconds) { return bytes / seconds / 1e9; }
/// A rate in bytes/s as GB/s: bytes_per_s / 10^9.
constexpr double gbyte_from_bytes_per_s(double bytes_per_s) { return bytes_per_s / 1e9; }
/// Seconds that `bytes` take at `gbit_per_s`: bytes × 8 / (gbit_per_s × 10^9).
constexpr double seconds_at_gbit_per_s(double bytes, double gbit_per_s) { return bytes * 8.0 / (gbit_per_s * 1e9); }
/// Seconds that `bytes` take at `gbyte_per_s`: bytes / (gbyte_per_s × 10^9).
constexpr double seconds_at_gbyte_per_s(double bytes, double gbyte_per_s) { return bytes / (gbyte_per_s * 1e9); }

// ---- Exact either way ----------------------------------------------------------------

/// Gbit/s as GB/s: gbit_per_s / 8 (exact).
constexpr double gbyte_from_gbit(double gbit_per_s) { return gbit_per_s / 8; }
/// GB/s as Gbit/s: 8 × gbyte_per_s (exact).
constexpr double gbit_from_gbyte(double gbyte_per_s) { return 8 * gbyte_per_s; }
/// Gbit/s as bit/s (Prometheus' unit): gbit_per_s × 10^9.
constexpr double bit_per_s_from_gbit(double gbit_per_s) { return gbit_per_s * 1e9; }
/// GB/s as bytes/s (Prometheus' unit): gbyte_per_s × 10^9.
constexpr double bytes_per_s_from_gbyte(double gbyte_per_s) { return gbyte_per_s * 1e9; }
/// GT/s as transfers/s (a PCIe link's speed for Prometheus): gt_per_s × 10^9.
constexpr double transfers_per_s_from_gt(double gt_per_s) { return gt_per_s * 1e9; }

// ---- Time ----------------------------------------------------------------------------------

/// Nanoseconds as seconds: ns / 10^9 (the point loops' windows and progress reports).
constexpr double seconds_from_ns(double ns) { return ns / 1e9; }

// ---- The α–β model's rates: × 8e-9 or × 1e-9 ------------------------------------------------

/// Rate of `bytes` in `seconds`, Gbit/s, as the model reads its samples and predictions:
/// bytes × 8e-9 / seconds.
constexpr double gbit_per_s_by_factor(double bytes, double seconds) { return bytes * 8e-9 / seconds; }
/// A rate in bytes/s (a β) as Gbit/s: bytes_per_s × 8e-9.
constexpr double gbit_from_bytes_per_s_by_factor(double bytes_per_s) { return bytes_per_s * 8e-9; }
/// A rate in bytes/s (a β) as GB/s: bytes_per_s × 1e-9.
constexpr double gbyte_from_bytes_per_s_by_factor(double bytes_per_s) { return bytes_per_s * 1e-9; }
/// Gbit/s as bytes/s (a β read back): gbit_per_s / 8e-9, the inverse of
/// gbit_from_bytes_per_s_by_factor.
constexpr double bytes_per_s_from_gbit_by_factor(double gbit_per_s) { return gbit_per_s / 8e-9; }
/// Nanoseconds as seconds by the factor: ns × 1e-9 (the model's latency samples, the RDMA
/// flows' windows, the latency quantiles of /metrics).
constexpr double seconds_from_ns_by_factor(double ns) { return ns * 1e-9; }

// ---- Formatting --------------------------------------------------------------------------

/// A β in bytes/s as people read it: "94.1 Gbit/s (11.8 GB/s)", each with `digits`
/// significant digits (plain_number: fixed notation, trailing zeros dropped), computed by
/// the model's form (gbit_from_bytes_per_s_by_factor, gbyte_from_bytes_per_s_by_factor).
std::string gbit_gbyte_text(double bytes_per_s, int digits = 4);

}  // namespace meshperf::core
