#include "core/collective/ops.hpp"

#include <array>

namespace meshperf::core {

// One line per op, each defined in its own file of core/collective/ops/.
extern const collective_op_traits allreduce_op;
extern const collective_op_traits allgather_op;
extern const collective_op_traits reduce_scatter_op;
extern const collective_op_traits alltoall_op;
extern const collective_op_traits broadcast_op;
extern const collective_op_traits incast_op;

namespace {

constexpr std::array model_algo_names{std::string_view{"ring"}, std::string_view{"tree"},
                                      std::string_view{"recursive_doubling"}, std::string_view{"recursive_halving"},
                                      std::string_view{"pairwise"}};

}  // namespace

std::string_view to_string(model_algo a) noexcept { return model_algo_names[static_cast<std::size_t>(a)]; }

std::span<const collective_op_traits> collective_ops() noexcept {
    // Copied on first use, after every op's constant initialisation; entry i is op i.
    static const std::array table{allreduce_op, allgather_op, reduce_scatter_op, alltoall_op, broadcast_op, incast_op};
    return table;
}

const collective_op_traits& op_traits(collective_op op) noexcept { return collective_ops()[static_cast<std::size_t>(op)]; }

const measured_prediction* prediction_of(collective_op op, collective_algo algo) noexcept {
    for (const auto& p : op_traits(op).predictions)
        if (p.algo == algo) return &p;
    return nullptr;
}

}  // namespace meshperf::core
