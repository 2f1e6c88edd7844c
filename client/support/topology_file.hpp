#pragma once
/// `--topology FILE` of `meshperf matrix`: each host's group labels, one host a line:
///
///     # host            labels (KEY=VALUE)
///     10.0.0.1:7470     leaf=l1 rack=r3
///     node17            leaf=l2 rack=r9
///
/// `#` starts a comment; blank lines are skipped. A host is written as in the host file
/// (matched after the same normalisation, so `node17` and `node17:7470` are one host). The
/// matrix groups hosts by one label (`--group-by KEY`, default: the first label of the
/// first host line): every host of the matrix must have it. Read-only: nothing measured.
#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace meshperf::client {

/// One line of a topology file.
struct topology_entry {
    std::string host;                                          ///< as written
    std::vector<std::pair<std::string, std::string>> labels;   ///< KEY=VALUE in line order
    std::size_t line = 0;                                      ///< 1-based
};

/// The matrix's hosts grouped by one label.
struct topology {
    std::string key;                       ///< the label the groups are by
    std::vector<std::string> group_names;  ///< by group index, in order of first appearance
    std::vector<std::size_t> group_of;     ///< per host of the matrix (the --hosts order)
};

/// The lines of a topology file's text; `source` names it in errors. Throws client_error
/// (exit_usage) for a line without labels, a label that is not KEY=VALUE or names a key
/// twice, and a host on two lines.
std::vector<topology_entry> parse_topology_text(const std::string& text, const std::string& source);

/// Groups `hosts` (as given to --hosts) by `group_by` (empty: the first label) from
/// `entries`. Throws client_error (exit_usage) naming the hosts the file leaves out, the
/// hosts it names that are not in the list, and hosts without the label.
topology group_hosts(const std::vector<topology_entry>& entries, std::span<const std::string> hosts,
                     const std::string& group_by, const std::string& source);

/// Reads the file `path` and groups `hosts` as group_hosts does. Throws client_error
/// (exit_usage) for a file that cannot be read.
topology read_topology(const std::string& path, std::span<const std::string> hosts, const std::string& group_by);

}  // namespace meshperf::client
