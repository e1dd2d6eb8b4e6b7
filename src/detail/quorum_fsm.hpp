// The quorum and validity rules of one round of votes (an acquire attempt or
// an extend), as a state machine without I/O or clock reads: callers feed it
// node answers and the current time, so tests can drive it with a fake clock.
#pragma once

#include "detail/vote.hpp"

#include <redlock/clock.hpp>
#include <redlock/error.hpp>
#include <redlock/lock.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace redlock::detail {

/// floor(n/2)+1: a majority of the configured nodes, reachable or not.
constexpr std::size_t quorum_of(std::size_t nodes) noexcept { return nodes / 2 + 1; }

/// The clock-drift allowance: ttl * drift_factor + 2 ms (the 2 ms cover the
/// granularity of Redis' expiry).
clock::duration drift_allowance(std::chrono::milliseconds ttl, double drift_factor) noexcept;

struct round_rules {
  std::chrono::milliseconds ttl{};
  double drift_factor = 0.01;
  /// Validity that must be left when the quorum is reached; success always
  /// needs more than zero.
  clock::duration min_validity{};
  /// A round decided at or after this instant fails with lock_expired,
  /// whatever the votes (an extend must finish while the old validity
  /// lasts); max() = none.
  clock::time_point hard_deadline = clock::time_point::max();
  /// Reported when refusals (key held by someone else, or not ours any
  /// more) alone make the quorum impossible.
  errc refusal_error = errc::not_acquired;
  /// Reported when refusals and failures together make it impossible and
  /// neither would have alone.
  errc mixed_error = errc::not_acquired;
  /// Extend: refusals are evidence that the lock is lost. Once the quorum
  /// is out of reach, wait for the pending nodes while their refusals could
  /// still prove that fewer than a quorum hold our key (so the verdict does
  /// not depend on the order of the answers), and report refusal_error
  /// whenever they prove it, before any other cause.
  bool prove_refusals = false;
  /// Bit i: node i cannot hold our key whatever it answers (extend: another
  /// owner held it when we acquired); counted with the refusals unless it
  /// grants.
  std::uint64_t never_holders = 0;
  /// Negative control (negative_controls.hpp): validity = start + ttl,
  /// without the clock-drift allowance.
  bool drop_drift = false;
};

class quorum_fsm {
 public:
  enum class state { pending, reached, failed };

  quorum_fsm(std::size_t nodes, round_rules rules);

  /// Begins a round at `start`, forgetting the previous one.
  void start(clock::time_point start);

  /// A node's answer. Answers from a node that already has one, and any
  /// answer once the round is decided, are ignored: a late vote never counts.
  state on_granted(std::size_t node, clock::time_point now);
  state on_refused(std::size_t node, clock::time_point now);
  state on_failed(std::size_t node, error_code error, clock::time_point now);
  /// Any of the three above, as `v` says.
  state on_vote(std::size_t node, const vote& v, clock::time_point now);
  /// The request timeout: every node still pending has failed.
  state on_timeout(clock::time_point now);
  /// More nodes known never to hold our key (round_rules::never_holders),
  /// learnt during the round; they count from the next event on.
  void add_never_holders(std::uint64_t nodes) noexcept { rules_.never_holders |= nodes; }
  /// Ends a pending round as failed with `error` (a cancellation): every
  /// node still pending has failed with it. A decided round stays decided.
  state abandon(error_code error);

  state current() const noexcept { return state_; }
  /// Set once the round has failed.
  error_code error() const noexcept { return error_; }
  /// start + ttl - drift: until then the key is held on the granting nodes.
  /// Meaningful once reached.
  clock::time_point validity_deadline() const noexcept { return validity_deadline_; }
  /// From start to the answer that completed the quorum.
  clock::duration elapsed() const noexcept { return elapsed_; }

  std::size_t nodes() const noexcept { return outcomes_.size(); }
  std::size_t quorum() const noexcept { return quorum_of(outcomes_.size()); }
  std::size_t granted() const noexcept { return granted_; }
  std::size_t refused() const noexcept { return refused_; }
  std::size_t failed() const noexcept { return failed_; }
  const std::vector<node_outcome>& outcomes() const noexcept { return outcomes_; }

 private:
  bool accepts(std::size_t node) const noexcept;
  state decide(clock::time_point now);
  error_code failure_cause(std::size_t ruled_out) const;
  bool never_holds(std::size_t node) const noexcept;
  /// Nodes that cannot hold our key: refused, or never_holders not granting.
  std::size_t ruled_out() const noexcept;
  /// Pending nodes whose refusal would still count.
  std::size_t open_pending() const noexcept;

  round_rules rules_;
  clock::duration drift_;
  std::vector<node_outcome> outcomes_;
  clock::time_point start_{};
  clock::time_point validity_deadline_{};
  clock::duration elapsed_{};
  // Counts of nodes (at most 64, see client_config): narrow, so that an
  // acquire's operation stays within 1 KB (acquire_op::attempt_settings).
  std::uint32_t granted_ = 0;
  std::uint32_t refused_ = 0;
  std::uint32_t failed_ = 0;
  state state_ = state::pending;
  error_code error_{};
};

}  // namespace redlock::detail
