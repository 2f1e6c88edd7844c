#pragma once
/// The SVG of a collective run (meshperf plot, meshperf report): per op, the time per
/// iteration and the bus bandwidth (nccl-tests' busbw) against size on log axes, measured as
/// markers and lines, the α–β prediction, where the run has one, as a dashed curve in the
/// same colour. Pure string output, in the style of client/render/svg_plot.hpp.
#include "core/collective/result.hpp"

#include <optional>
#include <span>
#include <string>

namespace meshperf::client {

/// Draws `run`. `predicted_time_s`: empty, or one entry per point of run.points (nullopt
/// where a size has no prediction), drawn as the predicted curves; busbw predicted from it
/// with the same factor as the measured, in GB/s (nccl-tests' unit, as the table and the
/// CSV). `title`: empty for one made from the run.
std::string render_collective_svg(const core::collective_result& run, std::span<const std::optional<double>> predicted_time_s = {},
                                  const std::string& title = {});

}  // namespace meshperf::client
