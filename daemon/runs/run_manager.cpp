#include "daemon/runs/run_manager.hpp"

#include "daemon/runtime/host_facts.hpp"
#include "daemon/runtime/log.hpp"

#include <chrono>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <random>

namespace meshperf::daemon {

using nlohmann::json;
using core::run_state;

namespace {
/// Sortable, unique run id: r-YYYYMMDD-HHMMSS-xxxxxx.
std::string new_run_id() {
    static std::mt19937 rng{std::random_device{}()};
    static std::mutex m;
    std::lock_guard lock(m);
    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    return fmt::format("r-{:%Y%m%d-%H%M%S}-{:06x}", fmt::gmtime(now), rng() & 0xffffff);
}
constexpr std::size_t max_live_runs = 256;  // finished runs kept in memory; older ones are in the store
constexpr const char* stopping_error = "interrupted: daemon stopping (points measured before are kept)";
}  // namespace

void mark_not_stored(json& doc, const std::string& why) {
    doc["stored"] = false;
    doc["store_error"] = why;
    if (!doc.contains("warnings") || !doc["warnings"].is_array()) doc["warnings"] = json::array();
    doc["warnings"].push_back(fmt::format("result not stored: {} (kept in this daemon's memory and retried; it is lost "
                                          "if the daemon stops first)", why));
}

run_record::run_record(std::string id, any_run_result result, std::string created_at)
    : id_(std::move(id)), result_(std::move(result)) {
    std::visit(
        [&](core::run_header& h) {
            h.id = id_;
            h.state = run_state::queued;
            h.created_at = std::move(created_at);
        },
        result_);
}

void run_record::push_event(json event) {
    event["run_id"] = id_;
    std::lock_guard lock(m_);
    // Text from outside (a peer's reply) may not be UTF-8: replaced, never thrown on.
    events_.push_back(event.dump(-1, ' ', false, json::error_handler_t::replace));
}

std::vector<std::string> run_record::events_since(std::size_t from, bool& finished) const {
    std::lock_guard lock(m_);
    finished = finished_;
    if (from >= events_.size()) return {};
    return {events_.begin() + static_cast<std::ptrdiff_t>(from), events_.end()};
}

const core::run_header& run_record::header() const {
    return std::visit([](const core::run_header& h) -> const core::run_header& { return h; }, result_);
}

json run_record::plain_document() const {
    std::lock_guard lock(m_);
    auto doc = std::visit([](const auto& run) { return core::to_json(run); }, result_);
    if (header().state == run_state::queued) doc["queue_position"] = queue_position_;
    return doc;
}

json run_record::document() const {
    auto doc = plain_document();
    std::string store_error;
    {
        std::lock_guard lock(m_);
        store_error = store_error_;
    }
    if (!store_error.empty() && store_ && store_->is_pending(id_)) mark_not_stored(doc, store_error);
    return doc;
}

core::recorded_state run_record::state() const {
    std::lock_guard lock(m_);
    return header().state;
}

run_manager::run_manager(daemon_context& ctx, result_store& store)
    : ctx_(ctx), store_(store), executor_([this] { executor_loop(); }) {}

run_manager::~run_manager() {
    shutting_down_ = true;
    {
        std::lock_guard lock(m_);
        stopping_ = true;
        for (auto& [id, r] : live_) r->cancel = true;
    }
    cv_.notify_all();
    executor_.join();
}

std::shared_ptr<run_record> run_manager::submit(const core::run_spec& spec, std::size_t max_queued) {
    core::run_result run;
    run.spec = spec;
    run.initiator = ctx_.host;
    return enqueue(std::move(run), max_queued);
}

std::shared_ptr<run_record> run_manager::submit(const core::collective_spec& spec, std::size_t max_queued) {
    core::collective_result run;
    run.spec = spec;
    return enqueue(std::move(run), max_queued);
}

std::shared_ptr<run_record> run_manager::enqueue(any_run_result run, std::size_t max_queued) {
    auto r = std::make_shared<run_record>(new_run_id(), std::move(run), utc_now_rfc3339());
    r->store_ = &store_;
    // Submissions one at a time: the executor only ever shortens the queue, so a count
    // checked here still holds when the run is appended below.
    std::lock_guard submitting(submit_m_);
    if (max_queued > 0 && queued() >= max_queued) return nullptr;
    commit(r);
    {
        std::lock_guard lock(m_);
        queue_.push_back(r);
        live_[r->id()] = r;
        publish_positions();
    }
    cv_.notify_all();
    return r;
}

void run_manager::publish_positions() {
    std::size_t pos = 0;
    for (auto& r : queue_) {
        ++pos;
        bool changed;
        {
            std::lock_guard lock(r->m_);
            changed = r->queue_position_ != pos;
            r->queue_position_ = pos;
        }
        if (changed) r->push_event({{"event", "queued"}, {"position", pos}, {"running", ctx_.gate.holder()}});
    }
}

void run_manager::commit(const std::shared_ptr<run_record>& r) { commit(r, r->plain_document()); }

void run_manager::commit(const std::shared_ptr<run_record>& r, const json& doc) {
    try {
        store_.save(doc);
    } catch (const std::exception& e) {
        bool first;
        {
            std::lock_guard lock(r->m_);
            first = !std::exchange(r->progress_failed_, true);
        }
        if (first) log_warn("run {}: its progress is not stored (kept in memory, retried): {}", r->id(), e.what());
    }
}

std::pair<run_state, std::string> run_manager::cancelled_outcome() const {
    if (shutting_down_) return {run_state::failed, stopping_error};
    return {run_state::cancelled, "cancelled by request"};
}

std::shared_ptr<run_record> run_manager::find(const std::string& id) const {
    std::lock_guard lock(m_);
    const auto it = live_.find(id);
    return it == live_.end() ? nullptr : it->second;
}

bool run_manager::cancel(const std::string& id) {
    std::shared_ptr<run_record> dequeued;
    {
        std::lock_guard lock(m_);
        const auto it = live_.find(id);
        if (it == live_.end()) return false;
        if (!it->second->state().in_progress()) return false;
        it->second->cancel = true;
        const auto q = std::find(queue_.begin(), queue_.end(), it->second);
        if (q != queue_.end()) {
            dequeued = *q;
            queue_.erase(q);
            publish_positions();
        }
    }
    if (dequeued) run_one(dequeued);  // finishes it as cancelled without measuring
    return true;
}

std::size_t run_manager::queued() const {
    std::lock_guard lock(m_);
    return queue_.size();
}

void run_manager::executor_loop() {
    while (true) {
        std::shared_ptr<run_record> r;
        {
            std::unique_lock lock(m_);
            cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
            if (stopping_ && queue_.empty()) return;
            r = queue_.front();
            queue_.pop_front();
            {
                std::lock_guard rl(r->m_);
                r->queue_position_ = 0;
            }
            publish_positions();
        }
        run_one(r);
        std::lock_guard lock(m_);
        // Keep recent runs in memory for streaming readers; older ones live in the store.
        while (live_.size() > max_live_runs) {
            auto oldest = std::find_if(live_.begin(), live_.end(), [](const auto& kv) { return !kv.second->state().in_progress(); });
            if (oldest == live_.end()) break;
            live_.erase(oldest);
        }
    }
}

void run_manager::run_one(const std::shared_ptr<run_record>& r) {
    // The record's kind never changes, so `shown` may be held outside the lock; its fields
    // are read and written under it.
    std::visit([&](auto& shown) { run(r, shown); }, r->result_);
}

template <class Result>
void run_manager::run(const std::shared_ptr<run_record>& r, Result& shown) {
    Result result;
    {
        std::lock_guard lock(r->m_);
        shown.state = r->cancel ? run_state::cancelled : run_state::running;
        result = shown;
    }
    if (result.state == run_state::running) {
        log_info("run {}: {}", r->id(), starting_words(result));
        commit(r);
        r->push_event({{"event", "running"}});
        auto emit = [&](const json& e) {
            const auto kind = e.value("event", "");
            if (kind == "started" || kind == "point") {
                Result next;  // only this thread changes `shown`: what it shows next, then shown
                {
                    std::lock_guard lock(r->m_);
                    next = shown;
                }
                take_event(next, result, e);
                // Committed before anyone can see it (live document, event): every point a
                // client has seen is a point kept, whatever happens next.
                if (kind == "point") commit(r, core::to_json(next));
                std::lock_guard lock(r->m_);
                shown = std::move(next);
            }
            r->push_event(e);
        };
        try {
            measure(ctx_, result, emit, r->cancel);
            result.state = run_state::completed;
        } catch (const std::exception& e) {
            result.state = run_state::failed;
            result.error = e.what();
            note_failure(result, e);
            if (r->cancel.load()) std::tie(result.state, result.error) = cancelled_outcome();
            log_warn("run {}: {}", r->id(), result.error);
        }
    } else {
        std::tie(result.state, result.error) = cancelled_outcome();
    }
    finish(r, result, shown);
}

void run_manager::call_hook(const core::run_result& run) const {
    if (on_finished_) on_finished_(run);
}

void run_manager::call_hook(const core::collective_result& run) const {
    if (on_finished_collective_) on_finished_collective_(run);
}

template <class Result>
void run_manager::finish(const std::shared_ptr<run_record>& r, Result& result, Result& shown) {
    result.finished_at = utc_now_rfc3339();
    std::string store_error;
    try {
        store_.save(core::to_json(result));
    } catch (const std::exception& e) {
        // The result still goes to the client, marked as not stored; the store keeps it in
        // memory and retries it (result_store::save).
        store_error = e.what();
        log_error("run {}: result not stored (kept in memory, retried): {}", r->id(), e.what());
    }
    {
        std::lock_guard lock(r->m_);
        shown = result;
        r->store_error_ = store_error;
    }
    try {
        call_hook(result);
    } catch (const std::exception& e) {
        log_error("run {}: finish hook: {}", r->id(), e.what());
    }
    auto doc = core::to_json(result);
    if (!store_error.empty()) mark_not_stored(doc, store_error);
    r->push_event({{"event", "result"}, {"result", doc}});
    {
        std::lock_guard lock(r->m_);
        r->finished_ = true;
    }
    log_info("run {}: {}", r->id(), result.state.text());
}

}  // namespace meshperf::daemon
