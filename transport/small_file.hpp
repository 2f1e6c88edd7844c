#pragma once
/// Reading a small input file an operator names (a node manifest, a topology or host list,
/// a baseline, the daemon's config) without ever hanging or growing without bound: only a
/// regular file of at most a stated size is read; a directory, FIFO, socket or device
/// (/dev/zero) is refused before anything is read.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace meshperf::transport {

/// The whole content of `path`, a regular file of at most `max_bytes`. `what` names the
/// input in messages ("--expect", "topology file"). Throws core::spec_error saying what is
/// wrong and what to do: missing, unreadable, a directory, not a regular file, too large.
/// Opens without blocking (a FIFO never waits for a writer) and reads at most max_bytes + 1
/// bytes, so a file that grows while read is refused too.
std::string read_small_file(const std::filesystem::path& path, std::size_t max_bytes, std::string_view what);

/// The limits of the inputs above: a manifest or config of a few hundred bytes is usual.
inline constexpr std::size_t max_config_file_bytes = 1u << 20;      ///< manifests, --config (1 MiB)
inline constexpr std::size_t max_list_file_bytes = 64u << 20;       ///< topology, hosts, baselines (64 MiB)

}  // namespace meshperf::transport
