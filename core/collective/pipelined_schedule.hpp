#pragma once
/// Pipelined schedules of measured collectives: the binary tree (reduce up, broadcast down,
/// and both for a tree all-reduce) and the chain broadcast (a ring opened at the root). The
/// buffer is cut into pieces of at most `piece_elements` elements that follow each other
/// down the tree or the chain, one step apart, as NCCL pipelines its chunks. Schedules are
/// core::rank_schedule (core/collective/schedule.hpp): every rank has the same number of
/// steps, and a send of step s meets the receive of step s. Nothing here does I/O.
#include "core/collective/schedule.hpp"

#include <cstddef>
#include <optional>
#include <vector>

namespace meshperf::core {

/// A rank's place in the binary tree over `ranks` ranks rooted at `root`: at position
/// v = (rank − root) mod p (heap order), the parent is at (v − 1) / 2 and the children at
/// 2v + 1 and 2v + 2 (those below p); positions map back to ranks by adding root mod p.
struct tree_links {
    std::optional<unsigned> parent;  ///< empty at the root
    std::vector<unsigned> children;  ///< 0, 1 or 2 ranks, the left one first
    unsigned depth = 0;              ///< edges from the root (0 at the root)
};

/// The links of rank `rank`. Throws spec_error unless rank and root are below ranks.
tree_links binary_tree(unsigned ranks, unsigned rank, unsigned root = 0);

/// Edges from the root to the deepest leaf: ⌊log2 p⌋, the least a binary tree over p ranks
/// allows (never more than ⌈log2 p⌉). 0 for one rank. Throws spec_error for 0 ranks.
unsigned binary_tree_height(unsigned ranks);

/// Pieces a pipeline cuts `elements` into: ⌈elements / piece_elements⌉ (0 for no elements).
/// Throws spec_error when piece_elements is 0.
std::size_t pipeline_pieces(std::size_t elements, std::size_t piece_elements);

/// Piece `piece` of the pipeline: [piece × piece_elements, min(elements, (piece + 1) ×
/// piece_elements)). Throws spec_error when piece_elements is 0 or piece is past the last.
element_range pipeline_piece(std::size_t elements, std::size_t piece_elements, std::size_t piece);

/// Tree broadcast from `root` of a buffer of `elements` elements: a rank at depth d passes
/// piece c to its children at step c + d, so there are pieces + height − 1 steps (none for
/// one rank or no elements). Throws spec_error as binary_tree and pipeline_pieces do.
rank_schedule tree_broadcast_steps(unsigned ranks, unsigned rank, unsigned root, std::size_t elements,
                                   std::size_t piece_elements);

/// Tree all-reduce rooted at rank 0, reduce and broadcast overlapped piece by piece: a rank
/// at depth d ≥ 1 sends its partial sum of piece c to its parent at step c + H − d (H the
/// height; the parent adds it in), and the root's sum of piece c comes back down, reaching
/// depth d + 1 at step c + H + d. pieces + 2H − 1 steps (none for one rank or no elements);
/// afterwards every rank holds the full sums. Throws spec_error as tree_broadcast_steps does.
rank_schedule tree_allreduce_steps(unsigned ranks, unsigned rank, std::size_t elements, std::size_t piece_elements);

/// Chain broadcast from `root` (the ring broadcast): root → root+1 → … → root+p−1, the rank
/// at position k = (rank − root) mod p passing piece c to the next at step c + k, so there
/// are pieces + p − 2 steps (none for one rank or no elements). Throws spec_error as
/// tree_broadcast_steps does.
rank_schedule chain_broadcast_steps(unsigned ranks, unsigned rank, unsigned root, std::size_t elements,
                                    std::size_t piece_elements);

}  // namespace meshperf::core
