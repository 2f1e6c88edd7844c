#pragma once
/// `meshperf collective --predict`: the α–β prediction (analysis/collective/predictions, the arithmetic
/// of `meshperf plan`) next to each measured point, for the same op, algorithm, p and size,
/// from the fits of the ring's links (host i -> host i+1): the slowest link bounds a ring,
/// so the worst α and the worst β over those links are used, each named. Incast and tree
/// broadcast, which plan has no formula for, and the chain broadcast, whose formula leaves
/// out the pipeline's fill, are predicted by walking their own schedule over that link
/// (analysis/collective/schedule_costs). Arithmetic only:
/// where the fits come from is client/collective/links.hpp.
#include "client/support/predictions.hpp"
#include "analysis/collective/predictions.hpp"
#include "analysis/model.hpp"
#include "core/collective/result.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace meshperf::client {

/// The fit of one ring link, rank `from` to its right neighbour: a fitted model (probes, a
/// model or run file; its segment for the step's message size is used) or a fixed α and β
/// (a matrix's one-way latency and bandwidth figures).
struct ring_link_fit {
    std::string from, to;  ///< the two daemons, HOST:PORT
    std::variant<analysis::link_model, analysis::model_fit> fit;
};

/// The fits a run's predictions are made from.
struct prediction_links {
    std::string source;                ///< "probes", "matrix FILE", "model FILE", ...
    std::vector<ring_link_fit> links;  ///< at least one; every link of the ring when measured
    /// From a matrix: every pair it measured with both figures (any two hosts, either way),
    /// so that incast and broadcast are walked over their own links. Empty otherwise.
    std::vector<ring_link_fit> pairs;
};

/// The `meshperf plan` formula (analysis/collective/predictions) of a measured (op, algorithm), and what
/// that means (the op's plan_formula, core/collective/ops), or nullopt where plan has none
/// (incast, tree broadcast). predict_point walks
/// the schedule of those and of the chain broadcast instead (analysis/collective/schedule_costs).
struct modelled_collective {
    core::collective_op coll;  ///< whose formula: another op's where the traffic is alike
    core::model_algo algo;
    std::string caveat;  ///< how the model differs from what runs ("" when it is the same)
};
std::optional<modelled_collective> modelled_as(core::collective_op op, core::collective_algo algo);

/// (measured − predicted) / predicted: positive when the run was slower than predicted.
/// Throws core::insane_figure unless both are finite and predicted > 0.
double relative_error(double measured_s, double predicted_s);

/// The prediction of `point` from `links` (its error: relative_error(point.time_s, time_s)),
/// or nullopt when the op and algorithm are not modelled. The link is α = the largest α and β = the smallest β over the links, each at
/// the message size of one step of the algorithm (analysis::step_message_bytes). Incast and
/// broadcast are walked (analysis::schedule_time), over each message's own link where
/// links.pairs holds every pair they use (rank r is links.links[r].from); the chain
/// broadcast's model also holds plan's time as plan_time_s.
std::optional<point_prediction> predict_point(const core::collective_point& point, const prediction_links& links);

/// The predictions of a run (client/support/predictions.hpp), index = point, and the lines
/// that say where the links came from and what is not modelled.
run_predictions predict_run(const core::collective_result& run, const prediction_links& links);

}  // namespace meshperf::client
