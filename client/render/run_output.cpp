#include "client/render/run_output.hpp"
#include "core/json_text.hpp"

#include "client/render/table.hpp"
#include "client/support/run_model.hpp"

namespace meshperf::client {

std::string render_run(output_format format, const core::run_result& run, const nlohmann::json& doc) {
    return render(format, {.table = [&] { return render_run_table(run); },
                           .json = [&] { return core::json_text(with_model(doc, run), 2) + "\n"; },
                           .csv = [&] { return render_csv(run); }});
}

}  // namespace meshperf::client
