#include "core/collective/pipelined_schedule.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <bit>
#include <fmt/format.h>

namespace meshperf::core {
namespace {

void require_rank(unsigned ranks, unsigned rank, const char* what) {
    if (ranks == 0) throw spec_error("a collective needs at least one rank");
    if (rank >= ranks) throw spec_error(fmt::format("{} {} is outside 0..{}", what, rank, ranks - 1));
}

}  // namespace

tree_links binary_tree(unsigned ranks, unsigned rank, unsigned root) {
    require_rank(ranks, rank, "rank");
    require_rank(ranks, root, "root");
    const unsigned v = (rank + ranks - root) % ranks;
    tree_links links;
    if (v > 0) links.parent = ((v - 1) / 2 + root) % ranks;
    for (unsigned c = 2 * v + 1; c <= 2 * v + 2 && c < ranks; ++c) links.children.push_back((c + root) % ranks);
    links.depth = static_cast<unsigned>(std::bit_width(v + 1)) - 1;  // ⌊log2(v + 1)⌋
    return links;
}

unsigned binary_tree_height(unsigned ranks) {
    require_rank(ranks, 0, "rank");
    return static_cast<unsigned>(std::bit_width(ranks)) - 1;  // depth of position p − 1
}

std::size_t pipeline_pieces(std::size_t elements, std::size_t piece_elements) {
    if (piece_elements == 0) throw spec_error("a pipeline piece needs at least one element");
    return elements / piece_elements + (elements % piece_elements ? 1 : 0);
}

element_range pipeline_piece(std::size_t elements, std::size_t piece_elements, std::size_t piece) {
    const std::size_t pieces = pipeline_pieces(elements, piece_elements);
    if (piece >= pieces) throw spec_error(fmt::format("piece {} is outside 0..{}", piece, pieces == 0 ? 0 : pieces - 1));
    const std::size_t first = piece * piece_elements;
    return {first, std::min(piece_elements, elements - first)};
}

rank_schedule tree_broadcast_steps(unsigned ranks, unsigned rank, unsigned root, std::size_t elements,
                                   std::size_t piece_elements) {
    const tree_links me = binary_tree(ranks, rank, root);
    const std::size_t pieces = pipeline_pieces(elements, piece_elements);
    if (ranks == 1 || pieces == 0) return {};
    // Every rank is laid out on the same steps and a piece's step is known in advance, so
    // the steps are filled in place rather than appended.
    auto steps = rank_schedule(pieces + binary_tree_height(ranks) - 1);
    for (std::size_t c = 0; c < pieces; ++c) {
        const auto piece = pipeline_piece(elements, piece_elements, c);
        if (me.parent) steps[c + me.depth - 1].recvs.push_back({*me.parent, piece, false});
        for (unsigned child : me.children) steps[c + me.depth].sends.push_back({child, piece, false});
    }
    return steps;
}

rank_schedule tree_allreduce_steps(unsigned ranks, unsigned rank, std::size_t elements, std::size_t piece_elements) {
    const tree_links me = binary_tree(ranks, rank, 0);
    const std::size_t pieces = pipeline_pieces(elements, piece_elements);
    if (ranks == 1 || pieces == 0) return {};
    const unsigned h = binary_tree_height(ranks);
    auto steps = rank_schedule(pieces + 2 * h - 1);
    for (std::size_t c = 0; c < pieces; ++c) {
        const auto piece = pipeline_piece(elements, piece_elements, c);
        // Up: children (depth + 1) send one step before this rank does.
        for (unsigned child : me.children) steps[c + h - me.depth - 1].recvs.push_back({child, piece, true});
        if (me.parent) steps[c + h - me.depth].sends.push_back({*me.parent, piece, false});
        // Down: the root starts the piece the step after its last child's partial sum landed.
        if (me.parent) steps[c + h + me.depth - 1].recvs.push_back({*me.parent, piece, false});
        for (unsigned child : me.children) steps[c + h + me.depth].sends.push_back({child, piece, false});
    }
    return steps;
}

rank_schedule chain_broadcast_steps(unsigned ranks, unsigned rank, unsigned root, std::size_t elements,
                                    std::size_t piece_elements) {
    require_rank(ranks, rank, "rank");
    require_rank(ranks, root, "root");
    const std::size_t pieces = pipeline_pieces(elements, piece_elements);
    if (ranks == 1 || pieces == 0) return {};
    const unsigned k = (rank + ranks - root) % ranks;
    auto steps = rank_schedule(pieces + ranks - 2);
    for (std::size_t c = 0; c < pieces; ++c) {
        const auto piece = pipeline_piece(elements, piece_elements, c);
        if (k > 0) steps[c + k - 1].recvs.push_back({(rank + ranks - 1) % ranks, piece, false});
        if (k + 1 < ranks) steps[c + k].sends.push_back({(rank + 1) % ranks, piece, false});
    }
    return steps;
}

}  // namespace meshperf::core
