#include "client/collective/predict.hpp"
#include "core/figure_text.hpp"

#include "analysis/model_warnings.hpp"
#include "analysis/collective/schedule_costs.hpp"
#include "core/error.hpp"
#include "core/sizes.hpp"
#include "core/units.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <set>

namespace meshperf::client {

using nlohmann::json;

namespace {

/// The worst α and the worst β over some links for one message size, and which links.
struct bounding_link {
    analysis::link_model link;
    std::size_t alpha_link = 0, beta_link = 0;  ///< index into the links bounded
};

analysis::link_model at_size(const ring_link_fit& l, double message_bytes) {
    if (const auto* fixed = std::get_if<analysis::link_model>(&l.fit)) return *fixed;
    return analysis::link_model::from_fit(std::get<analysis::model_fit>(l.fit), message_bytes);
}

bounding_link bound(const std::vector<ring_link_fit>& links, double message_bytes) {
    if (links.empty()) throw core::spec_error("no link fits to predict from");
    bounding_link b{at_size(links[0], message_bytes), 0, 0};
    for (std::size_t i = 1; i < links.size(); ++i) {
        const auto l = at_size(links[i], message_bytes);
        if (l.alpha_s > b.link.alpha_s) {
            b.link.alpha_s = l.alpha_s;
            b.alpha_link = i;
        }
        if (l.beta_bytes_per_s < b.link.beta_bytes_per_s) {
            b.link.beta_bytes_per_s = l.beta_bytes_per_s;
            b.beta_link = i;
        }
    }
    return b;
}

std::string link_name(const ring_link_fit& l) { return fmt::format("{} -> {}", l.from, l.to); }

/// How a schedule-walk prediction differs from `meshperf plan`'s formulas (the op's
/// schedule_walk, core/collective/ops); `own_links`: each message over its own link (a
/// matrix), else every link taken as the ring's worst.
std::string schedule_caveat(const core::schedule_walk& walk, bool own_links) {
    const std::string links = own_links ? "each message over its own link, from the matrix"
                                        : "every link taken as the ring's worst (a matrix as --model gives each its own)";
    return fmt::format("modelled by walking the measured schedule (analysis/collective/schedule_costs): {}; {}; {}", walk.what,
                       links, walk.versus_plan);
}

/// What the predictions ask of the fitted models (analysis::model_use_warnings: used far
/// beyond the sizes fitted, a poor fit), one line per warning with the links it applies to
/// ("every link" when all of them).
std::vector<std::string> fit_warnings(const core::collective_result& run, const std::vector<std::optional<point_prediction>>& preds,
                                      const prediction_links& links) {
    std::vector<analysis::model_use> uses;
    for (std::size_t i = 0; i < run.points.size() && i < preds.size(); ++i)
        if (preds[i])
            uses.push_back({fmt::format("{} {} {}", core::to_string(run.points[i].op), core::to_string(run.points[i].algo),
                                        core::format_size(run.points[i].size_bytes)),
                            preds[i]->model["step_message_bytes"].get<double>()});
    std::vector<std::pair<std::string, std::vector<std::string>>> by_message;  // in the order first seen
    for (const auto& l : links.links) {
        const auto* fit = std::get_if<analysis::model_fit>(&l.fit);
        if (!fit || uses.empty()) continue;
        for (const auto& w : analysis::model_use_warnings(*fit, uses)) {
            auto it = std::find_if(by_message.begin(), by_message.end(), [&](const auto& e) { return e.first == w.message; });
            if (it == by_message.end()) it = by_message.insert(by_message.end(), {w.message, {}});
            it->second.push_back(link_name(l));
        }
    }
    std::vector<std::string> out;
    for (const auto& [message, on] : by_message)
        out.push_back(fmt::format("warning: {}: {}", on.size() == links.links.size() ? std::string("every link")
                                                                                      : fmt::format("{}", fmt::join(on, ", ")),
                                  message));
    return out;
}

}  // namespace

std::optional<modelled_collective> modelled_as(core::collective_op op, core::collective_algo algo) {
    // Incast and tree broadcast have no formula in analysis/collective/predictions, and the chain
    // broadcast's leaves out the pipeline's fill: predict_point walks their schedule instead
    // (analysis/collective/schedule_costs). Each op's entry says which (core/collective/ops).
    const auto* p = core::prediction_of(op, algo);
    if (!p || !p->formula) return std::nullopt;
    return modelled_collective{p->formula->op, p->formula->algo, std::string(p->formula->caveat)};
}

double relative_error(double measured_s, double predicted_s) {
    if (!std::isfinite(measured_s) || !std::isfinite(predicted_s) || !(predicted_s > 0))
        throw core::insane_figure(fmt::format("cannot compare a measured time of {} s with a predicted {} s", measured_s,
                                              predicted_s));
    return (measured_s - predicted_s) / predicted_s;
}

namespace {

/// A point's prediction of `time_s` from `source`, whose worst α and β, `b`, are over `links`;
/// `model` gains their figures and names.
point_prediction prediction_of(const core::collective_point& point, double time_s, const std::string& source,
                               const std::vector<ring_link_fit>& links, const bounding_link& b, json model) {
    point_prediction out;
    out.time_s = time_s;
    out.algbw_gbyte_per_s = core::gbyte_per_s(static_cast<double>(point.size_bytes), time_s);
    out.busbw_gbyte_per_s = out.algbw_gbyte_per_s * core::busbw_factor(point.op, point.ranks);
    out.error = relative_error(point.time_s, time_s);
    model["source"] = source;
    model["alpha_us"] = b.link.alpha_s * 1e6;
    model["alpha_link"] = link_name(links[b.alpha_link]);
    model["beta_gbit_per_s"] = core::gbit_from_bytes_per_s_by_factor(b.link.beta_bytes_per_s);
    model["beta_link"] = link_name(links[b.beta_link]);
    out.model = std::move(model);
    return out;
}

/// The walk of `point`'s schedule with each message over its own link, from links.pairs (a
/// matrix; rank r is the host of ring link r): the cost and the links used, each once. Empty
/// when there are no pairs or one the schedule uses is not among them.
std::optional<std::pair<analysis::schedule_cost, std::vector<ring_link_fit>>> walk_own_links(
    const core::collective_point& point, const prediction_links& links, double message) {
    if (links.pairs.empty() || links.links.size() != point.ranks) return std::nullopt;
    std::map<std::string, unsigned> rank_of;
    for (unsigned r = 0; r < point.ranks; ++r) rank_of.emplace(links.links[r].from, r);
    std::map<std::pair<unsigned, unsigned>, const ring_link_fit*> pair;  // the matrix's pairs between the ranks
    for (const auto& p : links.pairs) {
        const auto from = rank_of.find(p.from), to = rank_of.find(p.to);
        if (from != rank_of.end() && to != rank_of.end()) pair.emplace(std::pair{from->second, to->second}, &p);
    }
    struct missing_pair {};
    std::vector<ring_link_fit> used;
    const auto link_between = [&](unsigned from, unsigned to) {
        const auto it = pair.find({from, to});
        if (it == pair.end()) throw missing_pair{};
        used.push_back(*it->second);  // schedule_time asks once per pair
        return at_size(*it->second, message);
    };
    try {
        auto cost = analysis::schedule_time(point.op, point.algo, point.ranks, point.element, point.size_bytes, link_between);
        return std::pair{cost, std::move(used)};
    } catch (const missing_pair&) {
        return std::nullopt;
    }
}

/// `meshperf plan`'s time for `point` over `link`, where plan has a formula for it.
std::optional<analysis::prediction> plan_prediction(const core::collective_point& point, const analysis::link_model& link) {
    const auto m = modelled_as(point.op, point.algo);
    if (!m) return std::nullopt;
    analysis::topology topo;
    topo.nodes = point.ranks;
    return analysis::predict(m->coll, m->algo, point.size_bytes, topo, link);
}

/// A prediction from the walk of the measured schedule itself (analysis/collective/schedule_costs):
/// incast and tree broadcast, which `meshperf plan` has no formula for, and the chain
/// broadcast, whose formula leaves out the pipeline's fill (plan's time is kept beside it as
/// plan_time_s, over the same bounding link). Each message crosses its own link where a
/// matrix gives every pair the schedule uses, else the ring's worst.
std::optional<point_prediction> predict_schedule(const core::collective_point& point, const prediction_links& links) {
    const double message = analysis::schedule_message_bytes(point.op, point.algo, point.size_bytes);
    auto own = walk_own_links(point, links, message);
    const auto& bounded = own ? own->second : links.links;
    const auto b = bound(bounded, message);
    const auto cost = own ? own->first
                          : analysis::schedule_time(point.op, point.algo, point.ranks, point.element, point.size_bytes, b.link);
    json model{{"collective", core::to_string(point.op)},
               {"algorithm", core::to_string(point.algo)},
               {"caveat", schedule_caveat(*core::prediction_of(point.op, point.algo)->walk, own.has_value())},
               {"links", own ? "own" : "ring's worst"},
               {"step_message_bytes", message},
               {"schedule", analysis::to_json(cost)}};
    if (const auto plan = plan_prediction(point, b.link)) model["plan_time_s"] = plan->time_s;
    return prediction_of(point, cost.time_s, links.source, bounded, b, std::move(model));
}

}  // namespace

std::optional<point_prediction> predict_point(const core::collective_point& point, const prediction_links& links) {
    if (analysis::schedule_modelled(point.op, point.algo)) return predict_schedule(point, links);
    const auto m = modelled_as(point.op, point.algo);
    if (!m) return std::nullopt;
    analysis::topology topo;
    topo.nodes = point.ranks;
    const double message = analysis::step_message_bytes(m->coll, m->algo, point.size_bytes, topo);
    const auto b = bound(links.links, message);
    const auto pred = analysis::predict(m->coll, m->algo, point.size_bytes, topo, b.link);
    return prediction_of(point, pred.time_s, links.source, links.links, b,
                         {{"collective", analysis::model_name(m->coll)},
                          {"algorithm", core::to_string(m->algo)},
                          {"caveat", m->caveat.empty() ? json(nullptr) : json(m->caveat)},
                          {"step_message_bytes", message},
                          {"prediction", analysis::to_json(pred)}});
}

run_predictions predict_run(const core::collective_result& run, const prediction_links& links) {
    run_predictions out;
    out.lines.push_back(fmt::format("predicted: α–β model (analysis/collective/predictions; incast and broadcast: "
                                    "analysis/collective/schedule_costs) from {}, {} link{}; each size uses the worst α and the worst β "
                                    "over them (the slowest link bounds a ring), except where incast and broadcast "
                                    "walk each message's own link from a matrix",
                                    links.source, links.links.size(), links.links.size() == 1 ? "" : "s"));
    std::set<std::string> said;
    for (const auto& p : run.points) {
        out.points.push_back(predict_point(p, links));
        const auto name = fmt::format("{} {}", core::to_string(p.op), core::to_string(p.algo));
        if (!said.insert(name).second) continue;
        const auto m = modelled_as(p.op, p.algo);
        if (analysis::schedule_modelled(p.op, p.algo) && out.points.back())
            out.lines.push_back(fmt::format("{}: {}", name, out.points.back()->model["caveat"].get<std::string>()));
        else if (m && !m->caveat.empty()) out.lines.push_back(fmt::format("{}: {}", name, m->caveat));
        else if (!m) out.lines.push_back(fmt::format("{}: not modelled: no prediction", name));
    }
    // Which links bound the largest size of each op: the figure to look at first.
    std::set<std::string> bounded;
    for (std::size_t i = run.points.size(); i-- > 0;) {
        const auto& pp = out.points[i];
        const auto name = fmt::format("{} {}", core::to_string(run.points[i].op), core::to_string(run.points[i].algo));
        if (!pp || !bounded.insert(name).second) continue;
        out.lines.push_back(fmt::format("{} at {}: α {} µs ({}), β {} Gbit/s ({})", name,
                                        core::format_size(run.points[i].size_bytes), core::plain_number(pp->model["alpha_us"].get<double>(), 3),
                                        pp->model["alpha_link"].get<std::string>(), core::plain_number(pp->model["beta_gbit_per_s"].get<double>(), 3),
                                        pp->model["beta_link"].get<std::string>()));
    }
    for (const auto& w : fit_warnings(run, out.points, links)) out.lines.push_back(w);
    json link_list = json::array();
    for (const auto& l : links.links) {
        json fit = std::holds_alternative<analysis::model_fit>(l.fit)
                       ? analysis::to_json(std::get<analysis::model_fit>(l.fit))
                       : analysis::to_json(std::get<analysis::link_model>(l.fit));
        link_list.push_back({{"from", l.from}, {"to", l.to}, {"fit", fit}});
    }
    out.info = {{"source", links.source}, {"links", link_list}, {"lines", out.lines}};
    return out;
}

}  // namespace meshperf::client
