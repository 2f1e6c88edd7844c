// meshperf local in a build without the CUDA toolkit: the command exists and says why it
// cannot run.
#include "client/commands.hpp"
#include "client/daemon_client.hpp"

namespace meshperf::client {

command_runner add_local_command(CLI::App& app, const common_options&) {
    auto* cmd = app.add_subcommand("local", "sweep copy-engine rates on this node (needs a build with CUDA)");
    cmd->allow_extras();
    return [] () -> int {
        throw client_error(exit_run_failed, "this meshperf was built without CUDA (nvcc was not found at build time): "
                                            "rebuild with -DMESHPERF_WITH_CUDA=ON on a machine with the CUDA toolkit");
    };
}

}  // namespace meshperf::client
