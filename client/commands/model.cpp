// meshperf model: the fitted model of a stored result, optionally fitted on some sizes and
// checked against the others (a held-out test of the model; tests/netns/heldout.sh).
#include "client/commands/commands.hpp"
#include "core/figure_text.hpp"
#include "client/support/output_format.hpp"
#include "client/support/daemon_client.hpp"
#include "client/render/table.hpp"
#include "client/support/result_files.hpp"
#include "client/support/run_model.hpp"
#include "core/error.hpp"
#include "core/sizes.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <memory>
#include <optional>
#include <set>

namespace meshperf::client {

using nlohmann::json;

namespace {

/// The measured sizes the model is fitted on: those of --fit-sizes, every other one with
/// --every-other, else all. A bad --fit-sizes list, or one naming a size that was not
/// measured, is a usage error.
std::set<std::uint64_t> choose_fit_sizes(const std::set<std::uint64_t>& measured, const std::optional<std::string>& fit_sizes,
                                         bool every_other) {
    std::set<std::uint64_t> out;
    if (fit_sizes) {
        std::vector<std::uint64_t> list;
        try {
            list = core::parse_size_list(*fit_sizes);
        } catch (const core::spec_error& e) {
            throw client_error(exit_usage, e.what());
        }
        std::vector<std::string> missing;
        for (auto s : list) {
            if (measured.count(s)) out.insert(s);
            else missing.push_back(core::format_size(s));
        }
        if (!missing.empty()) {
            std::vector<std::uint64_t> have(measured.begin(), measured.end());
            throw client_error(exit_usage, fmt::format("--fit-sizes {}: size{} {} not measured in this result (it has {})", *fit_sizes,
                                                       missing.size() == 1 ? "" : "s", fmt::format("{}", fmt::join(missing, ", ")),
                                                       have.empty() ? std::string("no latency or bandwidth points")
                                                                    : core::format_size_list(have)));
        }
        return out;
    }
    if (!every_other) return measured;
    std::size_t i = 0;
    for (auto s : measured)
        if (i++ % 2 == 0) out.insert(s);
    return out;
}

}  // namespace

command_runner add_model_command(CLI::App& app, const common_options&) {
    auto file = std::make_shared<std::string>();
    auto fit_sizes = std::make_shared<std::string>();
    auto every_other = std::make_shared<bool>(false);
    auto format = std::make_shared<output_format>();
    auto* cmd = app.add_subcommand("model", "fit t(n) = α + n/β to a stored result and compare its predictions with the "
                                            "measured points (optionally fitted on some sizes only: a held-out check)");
    cmd->add_option("file", *file, "RESULT.json (meshperf sweep/show --format json)")->required();
    auto* fs = cmd->add_option("--fit-sizes", *fit_sizes, "fit on these sizes only (64,4K,1M or 1K..1M); predict the others");
    auto* eo = cmd->add_flag("--every-other", *every_other, "fit on every other measured size (1st, 3rd, ...); predict the others");
    add_format_option(*cmd, *format, {output_format::table, output_format::json});
    return [=]() -> int {
        if (fs->count() && eo->count()) throw client_error(exit_usage, "give --fit-sizes or --every-other, not both");
        const auto f = load_result_file(*file);
        if (!f.is_run()) throw client_error(exit_usage, *file + " is a matrix; model needs a sweep result");
        const auto& run = f.run();
        std::set<std::uint64_t> sizes;
        for (const auto& s : analysis::model_samples(run)) sizes.insert(s.size_bytes);
        const auto fit_set = choose_fit_sizes(sizes, fs->count() ? std::optional<std::string>(*fit_sizes) : std::nullopt,
                                              *every_other);
        core::run_result fit_run = run;
        std::erase_if(fit_run.points, [&](const core::point_result& p) { return !fit_set.count(p.size_bytes); });
        const auto m = fit_run_model(fit_run);
        if (!m.fit) throw client_error(exit_usage, fmt::format("no model for {}: {}", *file, m.why_not));
        const bool held_out = fit_set.size() != sizes.size();
        json preds = json::array();
        double worst = 0;
        std::vector<std::vector<std::string>> rows{{"test", "size", "measured µs", "predicted µs", "error", "fitted"}};
        for (const auto& s : analysis::model_samples(run)) {
            const bool fitted = fit_set.count(s.size_bytes) > 0;
            if (held_out && fitted) continue;  // report the held-out points only
            const double pred = predicted_time_s(*m.fit, static_cast<double>(s.size_bytes), s.stream);
            const double err = (pred - s.time_s) / s.time_s;
            worst = std::max(worst, std::abs(err));
            preds.push_back({{"test", s.stream ? "bandwidth" : "latency"},
                             {"size_bytes", s.size_bytes},
                             {"measured_s", s.time_s},
                             {"predicted_s", pred},
                             {"rel_error", err},
                             {"fitted", fitted}});
            rows.push_back({s.stream ? "bandwidth" : "latency", core::format_size(s.size_bytes), fmt::format("{}", core::plain_number(s.time_s * 1e6, 4)),
                            fmt::format("{}", core::plain_number(pred * 1e6, 4)), fmt::format("{:+.1f}%", err * 100), fitted ? "yes" : "no"});
        }
        write_output("", render(*format, {.table = [&] {
                                              std::string out = render_model_text(m);
                                              out += fmt::format("\n{} (per-message time: latency one-way p50, bandwidth size/rate)\n",
                                                                 held_out ? fmt::format("predictions of the {} held-out sizes",
                                                                                        sizes.size() - fit_set.size())
                                                                          : std::string("residuals"));
                                              out += format_table(rows);
                                              out += fmt::format("worst |error| {:.1f}%\n", worst * 100);
                                              return out;
                                          },
                                          .json = [&] {
                                              return json{{"schema", "meshperf.model/1"},
                                                          {"file", *file},
                                                          {"run_id", run.id},
                                                          {"model", analysis::to_json(*m.fit)},
                                                          {"fit_sizes", std::vector<std::uint64_t>(fit_set.begin(), fit_set.end())},
                                                          {"held_out", held_out},
                                                          {"predictions", preds},
                                                          {"worst_abs_rel_error", worst}}
                                                         .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
                                                     "\n";
                                          }}));
        return exit_ok;
    };
}

}  // namespace meshperf::client
