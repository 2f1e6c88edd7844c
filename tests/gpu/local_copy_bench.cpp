// Local copy sweeps from the command line, for tests/gpu/device-check until the lead wires
// `meshperf local`. Prints CSV on stdout:
//   copy,src,dst,size_bytes,gb_per_s,gb_per_s_min,gb_per_s_max,copies_per_batch,verified
// or, with --json, the copy results as a JSON array.
// Exit: 0 ok, 1 verification failed, 2 bad usage or a CUDA error, 77 CUDA unusable here.
#include "core/error.hpp"
#include "core/sizes.hpp"
#include "gpu/copy_json.hpp"
#include "gpu/copy_sweep.hpp"
#include "gpu/status.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

using namespace meshperf;

namespace {

int usage() {
    std::fprintf(stderr,
                 "usage: meshperf_local_copy_bench [--copy h2d,d2h,d2d,p2p] [--sizes 4K..1G] [--device N]\n"
                 "                                 [--peer N] [--batches N] [--min-batch-ms MS] [--verify] [--json]\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::string kinds_text = "h2d,d2h,d2d", sizes_text = "4K..1G";
    gpu::copy_options o;
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        const auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw core::spec_error(std::string(a) + " needs a value");
            return argv[++i];
        };
        try {
            if (a == "--copy") kinds_text = value();
            else if (a == "--sizes") sizes_text = value();
            else if (a == "--device") o.device = std::stoi(value());
            else if (a == "--peer") o.peer_device = std::stoi(value());
            else if (a == "--batches") o.batches = static_cast<unsigned>(std::stoul(value()));
            else if (a == "--min-batch-ms") o.min_batch_seconds = std::stod(value()) / 1e3;
            else if (a == "--verify") o.verify = true;
            else if (a == "--json") json = true;
            else return usage();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "%s\n", e.what());
            return usage();
        }
    }
    try {
        const auto kinds = gpu::parse_copy_kinds(kinds_text);
        o.sizes = core::parse_size_list(sizes_text);
        const auto& s = gpu::cuda_availability();
        if (!s.ok()) {
            std::fprintf(stderr, "meshperf local: %s\n", s.message.c_str());
            return 77;
        }
        bool failed = false;
        nlohmann::json out = nlohmann::json::array();
        if (!json) std::printf("copy,src,dst,size_bytes,gb_per_s,gb_per_s_min,gb_per_s_max,copies_per_batch,verified\n");
        const auto emit = [&](const gpu::copy_result& r) {
            failed |= r.verify_failed();
            for (const auto& w : r.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
            if (json) return out.push_back(gpu::to_json(r));
            for (const auto& p : r.points)
                std::printf("%s,%s,%s,%llu,%.4f,%.4f,%.4f,%u,%s\n", std::string(gpu::to_string(r.kind)).c_str(),
                            r.src.c_str(), r.dst.c_str(), static_cast<unsigned long long>(p.size_bytes), p.gb_per_s,
                            p.gb_per_s_min, p.gb_per_s_max, p.copies_per_batch,
                            p.verify ? (p.verified() ? "yes" : "FAILED") : "no");
            std::fflush(stdout);
        };
        for (const auto k : kinds) {
            if (k == gpu::copy_kind::p2p) {
                const auto m = gpu::run_p2p_matrix(o);
                if (!m.waived.empty()) std::fprintf(stderr, "p2p waived: %s\n", m.waived.c_str());
                for (const auto& r : m.pairs) emit(r);
            } else {
                emit(gpu::run_copy_sweep(k, o));
            }
        }
        if (json) std::printf("%s\n", out.dump(2).c_str());
        return failed ? 1 : 0;
    } catch (const core::spec_error& e) {
        std::fprintf(stderr, "meshperf local: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "meshperf local: %s\n", e.what());
        return 2;
    }
}
