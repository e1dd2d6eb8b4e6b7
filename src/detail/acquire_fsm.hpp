// The decisions of one client::async_acquire, as a state machine without I/O:
// it takes events (a node's vote, the timer, the undo done, a release seen,
// a cancellation) with the current time and returns the next action for the
// I/O shell (acquire_op) to carry out. Tests drive it with a fake clock.
//
// Phases: attempting -> (reached: done, or for a fenced acquire whose
// granting nodes disagree: writing_back -> done | undoing) | (failed: undoing -> pausing ->
// attempting ...) | done. One timer serves every phase; each arming gets a
// new id, and a timer event whose id is not the current one is stale and
// does nothing, so an attempt is decided once and the operation completes
// once, whatever order a reply, a timer already queued and a wake-up come in.
#pragma once

#include "detail/quorum_fsm.hpp"
#include "detail/vote.hpp"

#include <redlock/config.hpp>

#include <cstdint>
#include <memory>
#include <vector>

namespace redlock::detail {

/// What to do on one node to undo a failed attempt.
enum class undo_role : unsigned char {
  skip,            ///< The node refused: our SET did not land there.
  send,            ///< Our SET may have landed (late, or the connection failed): send, do not wait.
  send_and_await,  ///< The node granted: wait for the delete before going on.
};
using undo_plan = std::vector<undo_role>;

struct acquire_rules {
  round_rules round{};
  clock::duration request_timeout{};
  retry_policy retry{};
  /// No new attempt starts once this much time has passed since start();
  /// zero = no limit but retry.max_attempts. Set, it is the limit unless
  /// retry.max_attempts is set too (see effective_max_attempts).
  clock::duration wait_timeout{};
  /// Give up once no attempt has been answered by a quorum (granted or
  /// refused) for this long since start() or the last such attempt; zero =
  /// no such bound.
  clock::duration unreachable_timeout{};
  /// A fenced acquire (docs/fencing.md): the attempt's quorum also decides
  /// the fences, written back to a majority when the granting nodes'
  /// counters differ.
  bool fenced = false;
  /// Negative controls (negative_controls.hpp): a reply to an earlier
  /// attempt counts as a vote; a failed attempt is not undone.
  bool count_late_votes = false;
  bool skip_undo = false;
};

class acquire_fsm {
 public:
  enum class phase { idle, attempting, writing_back, undoing, pausing, done };

  struct action {
    enum class kind {
      none,          ///< Nothing to do.
      send_attempt,  ///< New token, SET NX PX to every node, arm the timer at `at`.
      undo,          ///< Delete the attempt's token per `undo`, then call on_undone().
      pause,         ///< Arm the timer at `at`; wait for releases if `wait_for_release`.
      complete,      ///< Complete with `error` (success: the attempt's token and round()).
      write_back,    ///< Send fences() to every node, arm the timer at `at`.
    };
    kind what = kind::none;
    clock::time_point at{};
    std::uint64_t timer_id = 0;  ///< Pass back to on_timer().
    bool wait_for_release = false;
    undo_plan undo;
    error_code error{};
    /// With complete: a release wake-up came and no attempt made after it
    /// was decided, so the next waiter must get it. `here` as it came.
    bool pass_on_wake = false;
    bool wake_here = false;
  };

  /// `random` returns numbers in [0, 1) for retry and wake-up jitter.
  acquire_fsm(std::size_t nodes, acquire_rules rules, double (*random)());

  action start(clock::time_point now);
  /// A node's answer to attempt number `attempt`.
  action on_vote(std::uint64_t attempt, std::size_t node, vote v, clock::time_point now);
  /// The same for a fenced acquire: a granting node's counters, one per key.
  action on_vote(std::uint64_t attempt, std::size_t node, vote v,
                 const std::vector<std::uint64_t>& counters, clock::time_point now);
  /// A node's answer to the write-back of attempt number `attempt`.
  action on_written(std::uint64_t attempt, std::size_t node, vote v, clock::time_point now);
  /// The timer armed by the action carrying `timer_id` fired.
  action on_timer(std::uint64_t timer_id, clock::time_point now);
  /// The same, told that a lock of this client that the nodes would set
  /// against this acquire holds one of its keys until `held_here_until`
  /// (min() if none). A waiter then does not ask the nodes: the lock's
  /// release is handed to the line at once, so the attempt it would have
  /// made counts as made and refused (not past the unreachable bound, which
  /// only the nodes' answers move).
  action on_timer(std::uint64_t timer_id, clock::time_point now, clock::time_point held_here_until);
  /// The undo asked for has finished.
  action on_undone(clock::time_point now);
  /// A release of the key was seen: by this client itself (`here`: its
  /// delete is already queued ahead of anything we send now) or announced.
  action on_release_seen(bool here, clock::time_point now);
  /// The caller cancelled: an attempt in flight is undone first.
  action on_cancel(clock::time_point now);

  phase current() const noexcept { return phase_; }
  bool done() const noexcept { return phase_ == phase::done; }
  std::uint64_t attempt() const noexcept { return attempt_; }
  const quorum_fsm& round() const noexcept { return round_; }
  const acquire_rules& rules() const noexcept { return rules_; }
  /// The fences of the current attempt (per key): the largest counter each
  /// granting node of the quorum answered. Final once done.
  const std::vector<std::uint64_t>& fences() const noexcept { return fences_; }

 private:
  action start_attempt(clock::time_point now);
  /// `answered`: decided by the nodes' votes, not by the timer or a cancel.
  action decided(quorum_fsm::state state, clock::time_point now, bool answered);
  /// The attempt reached its quorum: done, or a write-back first.
  action reached(clock::time_point now);
  action written(quorum_fsm::state state, clock::time_point now);
  /// Undo the attempt wherever our SET may have landed.
  action undo_attempt(clock::time_point now);
  action after_undo(clock::time_point now);
  action pause_until(clock::time_point at, bool wait_for_release);
  /// A pausing waiter's attempt that a lock of this client would refuse:
  /// counted as made and refused, without asking the nodes.
  action refused_here(clock::time_point now);
  action complete(error_code error);
  clock::duration wake_jitter();
  /// Failures that waiting cannot heal alone sink the current round.
  bool permanently_failed() const;

  acquire_rules rules_;
  double (*random_)();
  quorum_fsm round_;
  /// The write-back's round: made by the first write-back (most acquires
  /// never need one, and the operation stays small without it).
  std::unique_ptr<quorum_fsm> write_back_;
  /// Why the last attempt failed (the attempt's or the write-back's round).
  error_code failure_{};
  clock::time_point attempt_start_{};
  /// Fenced: the fences so far, and whether every granting node agreed.
  std::vector<std::uint64_t> fences_;
  bool fences_agree_ = true;
  bool fences_seen_ = false;
  phase phase_ = phase::idle;
  std::uint64_t attempt_ = 0;
  std::uint64_t timer_id_ = 0;  ///< Of the one armed timer that counts.
  clock::time_point wait_deadline_ = clock::time_point::max();
  /// When the unreachable bound ends: unreachable_timeout after start() or
  /// after the last attempt a quorum answered; max() without a bound.
  clock::time_point unreachable_deadline_ = clock::time_point::max();
  clock::time_point pause_end_{};
  /// The pause ends in an attempt; false for the last wait before the wait
  /// deadline, which ends in giving up unless a release comes first.
  bool attempt_when_paused_ = true;
  /// The pause listens for releases (the resource is held elsewhere).
  bool pause_waits_for_release_ = false;
  bool cancelled_ = false;
  bool release_seen_ = false;       ///< During the current attempt or undo.
  bool release_seen_here_ = false;  ///< ... by this client itself.
  /// Wake-ups seen, numbered; those up to wakes_used_ were followed by an
  /// attempt that the nodes answered. The rest are passed on if we give up.
  std::uint64_t wakes_ = 0;
  std::uint64_t wakes_at_attempt_ = 0;  ///< wakes_ when the current attempt started.
  std::uint64_t wakes_used_ = 0;
  std::uint64_t last_wake_here_ = 0;  ///< Number of the last one from this client's own release.
};

}  // namespace redlock::detail
