#pragma once
/// Collective-time predictions from an α–β link model (the arithmetic of `meshperf plan`):
/// ring and tree all-reduce, all-gather, reduce-scatter, all-to-all and broadcast over p
/// nodes of G GPUs, their algorithm and bus bandwidth as nccl-tests defines them, and the
/// gradient communication of one data-parallel training step. Formulas and assumptions are
/// in docs/capacity-planning.md; in short:
///  - every message costs α + m/β on the link it crosses; links are full duplex; no
///    contention beyond what the formulas count (a non-blocking fabric);
///  - bytes S is the nccl-tests "size": the per-rank buffer of an all-reduce and broadcast,
///    the full (gathered) buffer of all-gather and reduce-scatter, the per-rank send buffer
///    of all-to-all; algbw = S / t; busbw = algbw × factor(n) over all n = p·G ranks;
///  - with G > 1 GPUs per node there are two links: the measured inter-node link (one per
///    NIC, R NICs per node, one per GPU unless told otherwise: a rail-optimised fabric) and
///    an intra-node link (NVLink), which costs time only when given; otherwise it is free
///    and the prediction says so. Ring and tree follow NCCL: one flat ring over all n ranks
///    (R channels, each node entered and left once per channel), and a double binary tree
///    between nodes with a chain inside each node. Other algorithms are hierarchical: the
///    algorithm between nodes, a ring inside each node;
///  - latency terms add up; bandwidth terms of different links overlap (chunks stream
///    through NVLink and NIC hops at once), so the larger one counts: the bottleneck;
///  - reduction arithmetic, pipeline fill and protocol overheads are not modelled: the
///    figures are what the fabric allows, a lower bound on what a library achieves.
#include "analysis/model.hpp"
#include "core/collective/ops.hpp"
#include "core/collective/dtype.hpp"
#include "core/units.hpp"

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string_view>
#include <vector>

namespace meshperf::analysis {

/// The collectives are core's (core/collective/ops.hpp): an op's entry says which model
/// algorithms `meshperf plan` has for it (its model_algos, NCCL's usual choice first) and
/// its flat α–β cost with each; those with none (incast) are not planned. The algorithms:
///  ring                all-reduce, all-gather, reduce-scatter, broadcast (pipelined ring)
///  tree                all-reduce (double binary tree, pipelined)
///  recursive_doubling  all-gather;   recursive_halving  reduce-scatter (log p steps, as
///                      NCCL's PAT algorithm achieves)
///  pairwise            all-to-all
using core::collective_op;
using core::model_algo;

/// `meshperf plan`'s name of an op: "all_reduce", "all_gather", "reduce_scatter",
/// "all_to_all", "broadcast"; "" for one it has no formula for.
std::string_view model_name(collective_op);
/// Parses "all_reduce" (also "allreduce", "all-reduce"), ...; throws core::spec_error listing the names.
collective_op parse_collective(std::string_view);
/// Parses "ring", "tree", ...; throws core::spec_error listing the names.
model_algo parse_algorithm(std::string_view);
/// The algorithms modelled for a collective, the default (NCCL's usual choice) first; none
/// for one plan has no formula for.
std::vector<model_algo> algorithms_for(collective_op);

/// Bus-bandwidth factor of nccl-tests for n ranks (core::busbw_factor): all-reduce
/// 2(n−1)/n; all-gather, reduce-scatter and all-to-all (n−1)/n; broadcast 1; 0 for no ranks.
double bus_factor(collective_op, unsigned ranks);

/// One link: a message of m bytes takes alpha_s + m / beta_bytes_per_s.
struct link_model {
    double alpha_s = 0;                  ///< seconds (>= 0)
    double beta_bytes_per_s = 0;         ///< bytes per second (> 0; +inf means latency only)

    static link_model from_us_gbit(double alpha_us, double beta_gbit_per_s) {
        return {alpha_us * 1e-6, core::bytes_per_s_from_gbit_by_factor(beta_gbit_per_s)};
    }
    /// The link from a fitted model for messages of message_bytes (its piecewise segment).
    static link_model from_fit(const model_fit&, double message_bytes);
};

/// Throws core::spec_error, naming the link `which`, unless α >= 0 is finite and β > 0 (+inf allowed).
void check_link(const link_model&, std::string_view which);

/// The machines a collective runs on.
struct topology {
    unsigned nodes = 2;                  ///< p, nodes linked by the measured (inter-node) path
    unsigned gpus_per_node = 1;          ///< G, ranks per node
    unsigned nics_per_node = 0;          ///< NICs each carrying the inter-node link; 0: one per GPU
    std::optional<link_model> intra;     ///< intra-node link (NVLink); empty: intra phases are free

    unsigned ranks() const { return nodes * gpus_per_node; }
    unsigned rails() const { return nics_per_node ? nics_per_node : gpus_per_node; }
};

/// Throws core::spec_error unless nodes >= 1, gpus_per_node >= 1, nics_per_node <= gpus_per_node,
/// ranks >= 2, and a single node comes with an intra-node link.
void validate(const topology&);

/// The predicted time of one collective.
struct prediction {
    collective_op coll = collective_op::allreduce;
    model_algo algo = model_algo::ring;
    std::uint64_t bytes = 0;             ///< S, as nccl-tests reports "size"
    unsigned nodes = 0;
    unsigned gpus_per_node = 1;
    unsigned ranks = 0;                  ///< nodes × gpus_per_node
    double time_s = 0;                   ///< latency_s + bandwidth_s
    double latency_s = 0;                ///< sum of the α terms (inter and intra)
    double bandwidth_s = 0;              ///< the larger of the inter and intra size/β terms
    double inter_bandwidth_s = 0;        ///< size/β term of the inter-node links
    double intra_bandwidth_s = 0;        ///< size/β term of the intra-node link (0 if not given)
    bool intra_modelled = true;          ///< false when G > 1 and no intra link was given
    double algbw_gbit_per_s = 0;         ///< S / time_s, 10⁹ bit/s (0 when S = 0)
    double busbw_gbit_per_s = 0;         ///< algbw × bus_factor(coll, ranks)

    /// "inter-node" or "intra-node": the link whose bandwidth term is larger.
    std::string_view bottleneck() const { return intra_bandwidth_s > inter_bandwidth_s ? "intra-node" : "inter-node"; }
};

/// Predicts one collective of S bytes with the inter-node link. Throws core::spec_error for an
/// algorithm that does not apply to the collective, an invalid topology, or a link with
/// α < 0 or β <= 0.
prediction predict(collective_op, model_algo, std::uint64_t bytes, const topology&, const link_model& inter);
/// Same, taking the inter-node link from a fitted model: the segment for the size of one
/// message of the algorithm's inter-node phase (see step_message_bytes).
prediction predict(collective_op, model_algo, std::uint64_t bytes, const topology&, const model_fit& inter);
/// Every (collective, algorithm) pair for S bytes, in the order of algorithms_for.
std::vector<prediction> predict_all(std::uint64_t bytes, const topology&, const link_model& inter);
std::vector<prediction> predict_all(std::uint64_t bytes, const topology&, const model_fit& inter);

/// Size of one message on an inter-node link: a ring step moves S/(R·n) (all-reduce,
/// all-gather, reduce-scatter, broadcast), a tree or recursive step up to S/(2R), an
/// all-to-all message S/n; R is the number of NICs per node, n the number of ranks.
double step_message_bytes(collective_op, model_algo, std::uint64_t bytes, const topology&);

/// Gradient element types: core::dtype (core/collective/dtype.hpp).
using core::dtype;

/// PyTorch DDP's default bucket: 25 MiB.
inline constexpr std::uint64_t default_bucket_bytes = 25ull << 20;

/// One data-parallel training step: gradients all-reduced in buckets.
struct dp_step_spec {
    std::uint64_t params = 0;            ///< N, parameters whose gradients are reduced
    dtype type = dtype::bf16;
    std::uint64_t bucket_bytes = default_bucket_bytes;
    std::optional<model_algo> algo;      ///< ring or tree; empty: per bucket, the faster
    std::optional<double> compute_s;     ///< forward + backward time of one step, seconds
};

/// Communication of one step. Buckets are all-reduced one after the other (one
/// communicator, one stream), so comm_s = (buckets − 1) × t(bucket) + t(last bucket).
struct dp_step_plan {
    std::uint64_t gradient_bytes = 0;    ///< N × dtype bytes
    std::uint64_t bucket_bytes = 0;
    std::uint64_t buckets = 0;           ///< ceil(gradient_bytes / bucket_bytes)
    std::uint64_t last_bucket_bytes = 0; ///< the remainder (= bucket_bytes when it divides)
    prediction bucket;                   ///< all-reduce of one full bucket
    prediction last_bucket;              ///< all-reduce of the last bucket
    double comm_s = 0;                   ///< communication time of the step
    double bandwidth_bound_s = 0;        ///< the bandwidth terms alone (α → 0): the floor
    std::optional<double> compute_s;
    /// No overlap: step = compute + comm; efficiency = compute / step.
    std::optional<double> step_no_overlap_s, efficiency_no_overlap;
    /// Perfect overlap of comm with compute: step = max(compute, comm) (an upper bound on
    /// efficiency; DDP overlaps the buckets with the backward pass, never the last one).
    std::optional<double> step_full_overlap_s, efficiency_full_overlap;
};

/// Plans one step. Throws core::spec_error for params = 0, bucket_bytes = 0, an algorithm other
/// than ring or tree, a compute time that is not positive, or an invalid topology or link.
dp_step_plan plan_dp_step(const dp_step_spec&, const topology&, const link_model& inter);
dp_step_plan plan_dp_step(const dp_step_spec&, const topology&, const model_fit& inter);

/// JSON forms. A prediction has collective, algorithm, bytes, nodes, time_s,
/// algbw_gbit_per_s, busbw_gbit_per_s, and also gpus_per_node, ranks, latency_s,
/// bandwidth_s, inter_bandwidth_s, intra_bandwidth_s, bottleneck, intra_modelled.
nlohmann::json to_json(const prediction&);
nlohmann::json to_json(const dp_step_plan&);
nlohmann::json to_json(const link_model&);
nlohmann::json to_json(const topology&);

}  // namespace meshperf::analysis
