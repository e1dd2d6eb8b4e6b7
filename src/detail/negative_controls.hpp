// Deliberate defects the torture program switches on to prove that its
// checker catches a broken client (negative controls). Off unless a test
// turns them on; nothing in the library's API reaches them. The operations
// read the switches when they start and hand them to their machines as
// rules (round_rules::drop_drift, acquire_rules::count_late_votes and
// skip_undo): the machines read only their inputs.
#pragma once

#include <atomic>

namespace redlock::detail {

struct negative_controls {
  /// Validity = start + ttl: the clock-drift allowance is dropped.
  std::atomic<bool> drop_drift{false};
  /// A reply to an earlier attempt of the same acquire counts as a vote for
  /// the current one.
  std::atomic<bool> count_late_votes{false};
  /// A failed attempt is not undone: its partial votes stay until their TTL.
  std::atomic<bool> skip_undo{false};
  /// An attempt is settled twice: the caller gets the lock, and the same
  /// attempt is then undone as if it had failed.
  std::atomic<bool> settle_twice{false};
};

/// The process-wide switches (all off by default); the torture program sets them.
negative_controls& broken_on_purpose() noexcept;

}  // namespace redlock::detail
