#include "analysis/collective/predictions.hpp"

#include "core/collective/figures.hpp"
#include "core/collective/ops/op_helpers.hpp"
#include "core/names.hpp"

#include "core/error.hpp"
#include "core/units.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

namespace meshperf::analysis {

using nlohmann::json;

namespace {

// Time of a phase, split into its α terms and its size/β terms.
struct cost {
    double lat = 0, bw = 0;
};

// One collective over n ranks joined by one link, each rank holding S bytes (nccl-tests
// size): the op's own α–β terms (core/collective/ops), over this link.
cost flat(collective_op c, model_algo a, double s, unsigned n, const link_model& l) {
    if (n <= 1) return {};
    const double per_byte = 1.0 / l.beta_bytes_per_s;  // 0 when β = ∞
    const auto terms = core::op_traits(c).flat_cost(a, s, n);
    return {terms.latency_terms * l.alpha_s, terms.bandwidth_bytes * per_byte};
}

// The names of the ops plan has a formula for, in table order.
std::vector<std::string_view> modelled_names() {
    std::vector<std::string_view> names;
    for (const auto& t : core::collective_ops())
        if (!t.model_algos.empty()) names.push_back(t.model_name);
    return names;
}

void check_algorithm(collective_op c, model_algo a) {
    const auto ok = algorithms_for(c);
    if (std::find(ok.begin(), ok.end(), a) != ok.end()) return;
    std::string names;
    for (auto x : ok) names += (names.empty() ? "" : ", ") + std::string(core::to_string(x));
    throw core::spec_error(fmt::format("{} has no {} algorithm here; use {}", model_name(c), core::to_string(a), names));
}

}  // namespace

std::string_view model_name(collective_op c) { return core::op_traits(c).model_name; }

collective_op parse_collective(std::string_view s) {
    const auto n = core::normalized_name(s);
    for (const auto& t : core::collective_ops())
        if (!t.model_algos.empty() && core::normalized_name(t.model_name) == n) return t.op;
    const auto names = modelled_names();
    throw core::spec_error(fmt::format("unknown collective \"{}\"; use {} or {}", s,
                                       fmt::join(names.begin(), names.end() - 1, ", "), names.back()));
}

model_algo parse_algorithm(std::string_view s) {
    const auto n = core::normalized_name(s);
    for (auto a : {model_algo::ring, model_algo::tree, model_algo::recursive_doubling, model_algo::recursive_halving,
                   model_algo::pairwise})
        if (core::normalized_name(core::to_string(a)) == n) return a;
    throw core::spec_error(fmt::format(
        "unknown algorithm \"{}\"; use ring, tree, recursive_doubling, recursive_halving or pairwise", s));
}

std::vector<model_algo> algorithms_for(collective_op c) {
    const auto algos = core::op_traits(c).model_algos;
    return {algos.begin(), algos.end()};
}

double bus_factor(collective_op c, unsigned n) { return n == 0 ? 0 : core::busbw_factor(c, n); }

void check_link(const link_model& l, std::string_view which) {
    if (!std::isfinite(l.alpha_s) || l.alpha_s < 0)
        throw core::spec_error(fmt::format("{} link: latency alpha must be >= 0 and finite, got {} s", which, l.alpha_s));
    if (std::isnan(l.beta_bytes_per_s) || l.beta_bytes_per_s <= 0)
        throw core::spec_error(fmt::format("{} link: bandwidth beta must be > 0, got {} B/s", which, l.beta_bytes_per_s));
}

link_model link_model::from_fit(const model_fit& m, double message_bytes) {
    const auto& l = m.line_for(message_bytes);
    return {l.alpha_s, l.beta_bytes_per_s};
}

void validate(const topology& t) {
    if (t.nodes < 1) throw core::spec_error("plan: --nodes must be at least 1");
    if (t.gpus_per_node < 1) throw core::spec_error("plan: --gpus-per-node must be at least 1");
    if (t.nics_per_node > t.gpus_per_node)
        throw core::spec_error(fmt::format("plan: {} NICs per node for {} GPUs per node; the model gives each NIC at "
                                     "least one GPU (use at most {} NICs)",
                                     t.nics_per_node, t.gpus_per_node, t.gpus_per_node));
    if (t.ranks() < 2) throw core::spec_error("plan: a collective needs at least 2 ranks (nodes × GPUs per node)");
    if (t.nodes == 1 && !t.intra)
        throw core::spec_error("plan: with one node every phase is intra-node; give the intra-node link (alpha and beta)");
    if (t.intra) check_link(*t.intra, "intra-node");
}

double step_message_bytes(collective_op, model_algo a, std::uint64_t bytes, const topology& t) {
    const double s = static_cast<double>(bytes), r = t.rails(), n = t.ranks();
    if (a == model_algo::pairwise) return s / n;
    return a == model_algo::ring ? s / (r * n) : s / (2 * r);
}

prediction predict(collective_op c, model_algo a, std::uint64_t bytes, const topology& t, const link_model& inter) {
    check_algorithm(c, a);
    validate(t);
    check_link(inter, "inter-node");
    const double s = static_cast<double>(bytes);
    const unsigned p = t.nodes, g = t.gpus_per_node, n = t.ranks();
    const double rails = t.rails();
    // Without an intra-node link, NVLink is free: no latency, unbounded bandwidth.
    const link_model intra = t.intra ? *t.intra : link_model{0, std::numeric_limits<double>::infinity()};

    double lat = 0, bw_inter = 0, bw_intra = 0;
    if (p == 1) {
        const cost k = flat(c, a, s, g, intra);  // one node: the flat formulas on NVLink
        lat = k.lat;
        bw_intra = k.bw;
    } else if (a == model_algo::ring) {
        // NCCL's ring over all n ranks, R channels, the ranks of a node adjacent. Each step
        // waits for its slowest hop, an inter-node one. Per channel every node is left once
        // over a NIC, so a node sends V (the per-rank volume) over its R NICs; each GPU
        // sends (G−1)/G of V over NVLink. The op's flat ring gives the steps and V.
        const auto ring = core::op_traits(c).flat_cost(model_algo::ring, s, n);
        const double v = ring.bandwidth_bytes;
        lat = ring.latency_terms * inter.alpha_s;
        bw_inter = v / (rails * inter.beta_bytes_per_s);
        bw_intra = (g - 1.0) / g * v / intra.beta_bytes_per_s;
    } else if (a == model_algo::tree) {
        // NCCL's tree: a double binary tree between nodes, a chain through the node's GPUs,
        // up (reduce) then down (broadcast); each NIC carries 1/R of the buffer.
        lat = 2 * (core::ops::ceil_log2(p) * inter.alpha_s + (g - 1.0) * intra.alpha_s);
        bw_inter = (p == 2 ? 1.0 : 2.0) * s / (rails * inter.beta_bytes_per_s);
        bw_intra = 2 * (g - 1.0) / g * s / intra.beta_bytes_per_s;
    } else if (a == model_algo::pairwise) {
        // n−1 exchange rounds, each gated by an inter-node message. S(p−1)/p of each rank's
        // buffer leaves the node, and G/R ranks share each NIC.
        lat = (n - 1.0) * inter.alpha_s;
        bw_inter = (g / rails) * ((p - 1.0) / p) * s / inter.beta_bytes_per_s;
        bw_intra = (g - 1.0) / n * s / intra.beta_bytes_per_s;
    } else {
        // Recursive doubling / halving between nodes on every rail (1/R of the buffer
        // each), a ring inside the node.
        const cost x = flat(c, a, s / rails, p, inter);
        const cost y = flat(c, model_algo::ring, s, g, intra);
        lat = x.lat + y.lat;
        bw_inter = x.bw;
        bw_intra = y.bw;
    }

    prediction r;
    r.coll = c;
    r.algo = a;
    r.bytes = bytes;
    r.nodes = p;
    r.gpus_per_node = g;
    r.ranks = n;
    r.latency_s = lat;
    r.inter_bandwidth_s = bw_inter;
    r.intra_bandwidth_s = bw_intra;
    r.bandwidth_s = std::max(bw_inter, bw_intra);
    r.time_s = r.latency_s + r.bandwidth_s;
    r.intra_modelled = g == 1 || t.intra.has_value();
    if (bytes > 0 && r.time_s > 0) {
        r.algbw_gbit_per_s = core::gbit_per_s_by_factor(s, r.time_s);
        r.busbw_gbit_per_s = r.algbw_gbit_per_s * bus_factor(c, r.ranks);
    }
    return r;
}

prediction predict(collective_op c, model_algo a, std::uint64_t bytes, const topology& t, const model_fit& inter) {
    return predict(c, a, bytes, t, link_model::from_fit(inter, step_message_bytes(c, a, bytes, t)));
}

namespace {

template <class Link>
std::vector<prediction> predict_all_impl(std::uint64_t bytes, const topology& t, const Link& inter) {
    std::vector<prediction> out;
    for (const auto& op : core::collective_ops())
        for (auto a : op.model_algos) out.push_back(predict(op.op, a, bytes, t, inter));
    return out;
}

template <class Link>
dp_step_plan plan_dp_step_impl(const dp_step_spec& spec, const topology& t, const Link& inter) {
    if (spec.params == 0) throw core::spec_error("plan: the parameter count must be at least 1 (e.g. --params 7e9)");
    if (spec.bucket_bytes == 0) throw core::spec_error("plan: the bucket size must be at least 1 byte (e.g. --bucket 25M)");
    if (spec.algo && *spec.algo != model_algo::ring && *spec.algo != model_algo::tree)
        throw core::spec_error("plan: gradients are all-reduced with ring or tree");
    if (spec.compute_s && (!std::isfinite(*spec.compute_s) || *spec.compute_s <= 0))
        throw core::spec_error("plan: the step compute time must be positive (e.g. --step-compute-ms 300)");
    const unsigned width = dtype_bytes(spec.type);
    if (spec.params > ~0ull / width) throw core::spec_error("plan: the parameter count is too large");

    dp_step_plan plan;
    plan.gradient_bytes = spec.params * width;
    plan.bucket_bytes = std::min(spec.bucket_bytes, plan.gradient_bytes);
    plan.buckets = plan.gradient_bytes / plan.bucket_bytes + (plan.gradient_bytes % plan.bucket_bytes != 0);
    plan.last_bucket_bytes = plan.gradient_bytes - (plan.buckets - 1) * plan.bucket_bytes;

    auto reduce = [&](std::uint64_t b) {
        if (spec.algo) return predict(collective_op::allreduce, *spec.algo, b, t, inter);
        auto ring = predict(collective_op::allreduce, model_algo::ring, b, t, inter);
        auto tree = predict(collective_op::allreduce, model_algo::tree, b, t, inter);
        return tree.time_s < ring.time_s ? tree : ring;
    };
    plan.bucket = reduce(plan.bucket_bytes);
    plan.last_bucket = reduce(plan.last_bucket_bytes);
    const double full = static_cast<double>(plan.buckets - 1);
    plan.comm_s = full * plan.bucket.time_s + plan.last_bucket.time_s;
    plan.bandwidth_bound_s = full * plan.bucket.bandwidth_s + plan.last_bucket.bandwidth_s;
    if (spec.compute_s) {
        const double c = *spec.compute_s;
        plan.compute_s = c;
        plan.step_no_overlap_s = c + plan.comm_s;
        plan.efficiency_no_overlap = c / *plan.step_no_overlap_s;
        plan.step_full_overlap_s = std::max(c, plan.comm_s);
        plan.efficiency_full_overlap = c / *plan.step_full_overlap_s;
    }
    return plan;
}

}  // namespace

std::vector<prediction> predict_all(std::uint64_t bytes, const topology& t, const link_model& inter) {
    return predict_all_impl(bytes, t, inter);
}
std::vector<prediction> predict_all(std::uint64_t bytes, const topology& t, const model_fit& inter) {
    return predict_all_impl(bytes, t, inter);
}


dp_step_plan plan_dp_step(const dp_step_spec& spec, const topology& t, const link_model& inter) {
    return plan_dp_step_impl(spec, t, inter);
}
dp_step_plan plan_dp_step(const dp_step_spec& spec, const topology& t, const model_fit& inter) {
    return plan_dp_step_impl(spec, t, inter);
}

namespace {
json opt_num(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
}  // namespace

json to_json(const prediction& p) {
    return {{"collective", model_name(p.coll)},
            {"algorithm", core::to_string(p.algo)},
            {"bytes", p.bytes},
            {"nodes", p.nodes},
            {"gpus_per_node", p.gpus_per_node},
            {"ranks", p.ranks},
            {"time_s", p.time_s},
            {"latency_s", p.latency_s},
            {"bandwidth_s", p.bandwidth_s},
            {"inter_bandwidth_s", p.inter_bandwidth_s},
            {"intra_bandwidth_s", p.intra_bandwidth_s},
            {"bottleneck", p.bottleneck()},
            {"intra_modelled", p.intra_modelled},
            {"algbw_gbit_per_s", p.algbw_gbit_per_s},
            {"busbw_gbit_per_s", p.busbw_gbit_per_s}};
}

json to_json(const dp_step_plan& d) {
    return {{"gradient_bytes", d.gradient_bytes},
            {"bucket_bytes", d.bucket_bytes},
            {"buckets", d.buckets},
            {"last_bucket_bytes", d.last_bucket_bytes},
            {"bucket", to_json(d.bucket)},
            {"last_bucket", to_json(d.last_bucket)},
            {"comm_s", d.comm_s},
            {"bandwidth_bound_s", d.bandwidth_bound_s},
            {"compute_s", opt_num(d.compute_s)},
            {"step_no_overlap_s", opt_num(d.step_no_overlap_s)},
            {"efficiency_no_overlap", opt_num(d.efficiency_no_overlap)},
            {"step_full_overlap_s", opt_num(d.step_full_overlap_s)},
            {"efficiency_full_overlap", opt_num(d.efficiency_full_overlap)}};
}

json to_json(const link_model& l) {
    return {{"alpha_us", l.alpha_s * 1e6},
            {"beta_gbit_per_s", std::isfinite(l.beta_bytes_per_s) ? json(core::gbit_from_bytes_per_s_by_factor(l.beta_bytes_per_s)) : json(nullptr)}};
}

json to_json(const topology& t) {
    return {{"nodes", t.nodes},
            {"gpus_per_node", t.gpus_per_node},
            {"nics_per_node", t.rails()},
            {"ranks", t.ranks()},
            {"intra", t.intra ? to_json(*t.intra) : json(nullptr)}};
}

}  // namespace meshperf::analysis
