#pragma once
/// Where a run is in its life, for a sweep and a collective alike: the one state enum, and
/// the state field of a result, which also keeps a word it could not name (a stored document
/// from elsewhere), so that such a document is shown and written back as it was read.
#include <optional>
#include <string>
#include <string_view>

namespace meshperf::core {

/// A run's state. JSON spells each as its name: "queued", "running", "completed", "failed",
/// "cancelled".
enum class run_state { queued, running, completed, failed, cancelled };

/// The JSON spelling of `s`.
std::string_view to_string(run_state s);
/// The state `word` spells; nullopt for any other word (the empty one included).
std::optional<run_state> parse_run_state(std::string_view word);

/// A result's "state": a run_state, or the word a document held in its place (empty when it
/// held none). Compares equal to a run_state only when it is that state.
class recorded_state {
public:
    /// No state: the empty word (a result read from a document without one).
    recorded_state() = default;
    recorded_state(run_state s) : known_(s) {}  // NOLINT: implicit, so `r.state = run_state::failed` reads as it says
    /// The state `word` names, or `word` kept as it is.
    static recorded_state from_text(std::string word);

    /// The state, or nullopt for a word that names none.
    std::optional<run_state> known() const { return known_; }
    /// What JSON and people read: the state's spelling, or the word kept.
    std::string_view text() const { return known_ ? to_string(*known_) : std::string_view(other_); }
    /// True for no state at all (the empty word).
    bool empty() const { return text().empty(); }
    /// Queued or running: the run may still change.
    bool in_progress() const { return known_ == run_state::queued || known_ == run_state::running; }

    bool operator==(run_state s) const { return known_ == s; }
    bool operator==(const recorded_state&) const = default;

private:
    std::optional<run_state> known_;
    std::string other_;  // the word read, when it names no state
};

}  // namespace meshperf::core
