// matrix_memory: the memory `meshperf matrix --mode full --format json` keeps per link,
// without daemons. Feeds the n(n-1) links of n synthetic hosts through the CLI's own code:
// analysis::link_store (the records), analysis::analyze_link_source (the verdict), and
// client::write_matrix_json (the document, streamed to stdout). Prints to stderr, after each
// phase, the peak RSS (VmHWM) and the bytes malloc holds (mallinfo2), and the sizes of a
// record and of a verdict. A benchmark (bench/matrix-memory runs it), not a test.
//
//   matrix_memory HOSTS [--tree] >/dev/null
//
// --tree renders as the CLI did before streaming: the whole document as one nlohmann::json
// tree, dumped to one string, then written.
#include "analysis/link_store.hpp"
#include "analysis/outliers.hpp"
#include "client/render/matrix_json.hpp"
#include "client/support/output_format.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <malloc.h>
#include <string>
#include <vector>

namespace {

using namespace meshperf;

long vm_hwm_kib() {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
    return -1;
}

void phase(const char* what) {
    const auto m = mallinfo2();
    std::fprintf(stderr, "matrix_memory: %-9s peak_rss_kib %ld malloc_in_use_bytes %zu\n", what, vm_hwm_kib(),
                 m.uordblks + m.hblkhd);
}

std::string run_id(std::size_t k) { return fmt::format("r-20261205-{:02}{:02}{:02}-{:06x}", k / 3600 % 24, k / 60 % 60, k % 60, k & 0xffffff); }

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: matrix_memory HOSTS [--tree] >/dev/null\n");
        return 2;
    }
    const std::size_t n = std::strtoul(argv[1], nullptr, 10);
    const bool tree = argc > 2 && std::strcmp(argv[2], "--tree") == 0;
    std::vector<std::string> names;
    for (std::size_t h = 0; h < n; ++h) names.push_back(fmt::format("10.{}.{}.{}:7470", h / 65536, h / 256 % 256, h % 256));
    phase("start");
    analysis::link_store store(n);
    store.reserve(n * (n - 1));
    std::size_t k = 0;
    for (std::size_t f = 0; f < n; ++f)
        for (std::size_t t = 0; t < n; ++t) {
            if (f == t) continue;
            analysis::link_sample s;
            s.from = f, s.to = t;
            s.gbit_per_s = (k % 997 == 0 ? 3.0 : 9.5) + 0.001 * static_cast<double>(k % 101);  // about 1 in 1,000 slow
            s.lat_us = 20.0 + 0.01 * static_cast<double>(k % 89);
            const std::vector<std::string> ids{run_id(2 * k), run_id(2 * k + 1)};
            store.put(s, ids, false);
            ++k;
        }
    phase("records");
    const auto a = analysis::analyze_link_source(n, store.source());
    phase("verdict");
    const nlohmann::json meta{{"schema", "meshperf.matrix/1"}, {"mode", "full"}, {"rounds", n - 1}, {"retest_rounds", 0}};
    const client::matrix_document doc{names, a, store, meta};
    if (tree) {
        nlohmann::json whole = meta;
        const auto verdict = analysis::to_json(a, names);
        for (const auto& [key, v] : verdict.items()) whole[key] = v;
        for (std::size_t i = 0; i < a.links.size(); ++i) whole["links"][i] = client::matrix_link_json(doc, i);
        client::write_output("-", whole.dump(2) + "\n");
    } else {
        client::write_output_streamed("-", [&](const client::text_sink& out) { client::write_matrix_json(doc, out); });
    }
    phase("json");
    std::fprintf(stderr, "matrix_memory: hosts %zu links %zu record_bytes %zu verdict_bytes %zu store_bytes %zu render %s\n", n,
                 store.size(), sizeof(analysis::link_record), sizeof(analysis::link_verdict), store.bytes(), tree ? "tree" : "streamed");
    return 0;
}
