#pragma once
/// Queue and executor of runs this daemon initiates: one measurement at a time, in order of
/// arrival. Each run keeps its event log (NDJSON lines) for streaming clients; results are
/// stored before a run is reported complete.
#include "daemon/runs/run_kinds.hpp"
#include "daemon/runtime/context.hpp"
#include "daemon/store/result_store.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace meshperf::daemon {

/// Marks a run document whose final result could not be stored: "stored": false,
/// "store_error": why, and a "result not stored: ..." warning. The CLI exits non-zero on it.
void mark_not_stored(nlohmann::json& doc, const std::string& why);

/// One run's live state, a sweep's or a collective's alike. Shared between the executor and
/// the HTTP handlers.
class run_record {
public:
    /// A queued run: `result` holds its spec (and a sweep's initiator); the record sets its
    /// id, state (queued) and creation time.
    run_record(std::string id, any_run_result result, std::string created_at);

    const std::string& id() const { return id_; }
    /// Appends an event (adds "run_id") to the log readers follow.
    void push_event(nlohmann::json event);
    /// Events from index `from` on; `finished` tells whether the log is complete.
    std::vector<std::string> events_since(std::size_t from, bool& finished) const;
    /// The run document as GET /v1/runs/{id} returns it. While its final result waits in
    /// memory to be stored, it carries "stored": false, "store_error" and a warning.
    nlohmann::json document() const;
    core::recorded_state state() const;

    std::atomic<bool> cancel{false};

private:
    friend class run_manager;
    mutable std::mutex m_;
    std::string id_;
    any_run_result result_;            // as readers see it; its kind never changes
    std::vector<std::string> events_;
    bool finished_ = false;
    std::size_t queue_position_ = 0;  // 1 = next; 0 = not queued
    std::string store_error_;          // why the final result could not be stored; empty when it was
    const result_store* store_ = nullptr;
    bool progress_failed_ = false;     // a point could not be committed (logged once)

    const core::run_header& header() const;  // caller holds m_
    nlohmann::json plain_document() const;  // as stored: without the not-stored marks
};

class run_manager {
public:
    run_manager(daemon_context& ctx, result_store& store);
    /// Stops the executor after cancelling the current and queued runs; they are stored as
    /// failed with "interrupted: daemon stopping", their measured points kept.
    ~run_manager();

    /// Queues a validated run; returns it (state queued, position known). With
    /// `max_queued` > 0, returns null instead when that many runs are already waiting.
    std::shared_ptr<run_record> submit(const core::run_spec& spec, std::size_t max_queued = 0);
    /// The same for a validated collective run, which this daemon coordinates.
    std::shared_ptr<run_record> submit(const core::collective_spec& spec, std::size_t max_queued = 0);
    /// A live run (queued, running, or finished in this process), or null.
    std::shared_ptr<run_record> find(const std::string& id) const;
    /// Cancels a queued or running run. False when unknown or already finished.
    bool cancel(const std::string& id);
    /// Runs waiting (not counting the one running).
    std::size_t queued() const;
    /// Called with every finished run (any final state) after it is stored and before its
    /// `result` event is published, so /metrics has it when a client sees the result. Set
    /// once, before the first submit; called on the executor thread.
    void on_finished(std::function<void(const core::run_result&)> hook) { on_finished_ = std::move(hook); }
    /// The same for every finished collective run.
    void on_collective_finished(std::function<void(const core::collective_result&)> hook) { on_finished_collective_ = std::move(hook); }

private:
    void executor_loop();
    /// Runs `r` (or finishes it as cancelled when its cancel flag is set), whatever its kind.
    void run_one(const std::shared_ptr<run_record>& r);
    /// The one run path: `shown` is the record's result, of the run's kind (run_kinds.hpp).
    template <class Result>
    void run(const std::shared_ptr<run_record>& r, Result& shown);
    std::shared_ptr<run_record> enqueue(any_run_result run, std::size_t max_queued);
    /// Stores a finished run (a failure to store becomes a warning), publishes it as the
    /// record's `shown`, runs the finish hook of its kind, sends the result event and marks
    /// the log complete.
    template <class Result>
    void finish(const std::shared_ptr<run_record>& r, Result& result, Result& shown);
    void call_hook(const core::run_result& run) const;
    void call_hook(const core::collective_result& run) const;
    void publish_positions();  // caller holds m_
    /// Commits the run's document as it stands (state, points so far) to the store; a
    /// failure is logged once per run, the final save keeps the result in memory.
    void commit(const std::shared_ptr<run_record>& r);
    /// The same with the document to store (a point not yet published to the record).
    void commit(const std::shared_ptr<run_record>& r, const nlohmann::json& doc);
    /// The state and error of a run stopped by its cancel flag: "cancelled by request", or
    /// failed "interrupted: daemon stopping" when the daemon is shutting down.
    std::pair<core::run_state, std::string> cancelled_outcome() const;

    daemon_context& ctx_;
    result_store& store_;
    mutable std::mutex m_;
    std::mutex submit_m_;  // serialises submit(), so the queue limit holds
    std::condition_variable cv_;
    std::deque<std::shared_ptr<run_record>> queue_;
    std::map<std::string, std::shared_ptr<run_record>> live_;
    bool stopping_ = false;
    std::atomic<bool> shutting_down_{false};
    std::function<void(const core::run_result&)> on_finished_;
    std::function<void(const core::collective_result&)> on_finished_collective_;
    std::thread executor_;
};

}  // namespace meshperf::daemon
