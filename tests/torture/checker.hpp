// The mutual-exclusion checker: pure functions of a run's histories.
//
// 1. Lease exclusion. An acquire that succeeded holds its resource from its
//    ok event to the earlier of its release's invoke and its validity
//    deadline; each successful extend replaces the deadline. Two leases of
//    one resource with different tokens that overlap are a violation.
// 2. Critical sections. A cs of one owner overlapping a cs of another owner
//    on the same resource is a violation.
// 3. Lost updates. Ordered by start, each cs of a resource must read what
//    the previous one wrote (0 for the first), and the register's final
//    value must equal the number of completed critical sections.
// 4. Node findings of the controller: a lock key without TTL, or one still
//    there after the heal and a maximum TTL, is a violation.
// 5. Bogus successes: an acquire (or extend) that reports success with an
//    empty token or an epoch validity deadline holds nothing the checker
//    could follow, so it is a violation in itself.
// 6. Orphaned votes: a lock key whose token no successful acquire returned
//    (the vote of a failed attempt) seen by the controller's scans on one
//    node for longer than orphan_grace. A correct client undoes a failed
//    attempt at once wherever its SET may have landed; only a SET left on a
//    connection that a fault broke may live on, up to its TTL, so a node
//    faulted from a maximum TTL before the first sighting to the last one
//    is not judged.
// 7. Fence order of acquires (property P, docs/fencing.md): a fenced
//    acquire that completed before another of the same resource began got
//    a smaller fence.
// 8. Stale writes (Jepsen's FencedMutex model): a register write that
//    carries a fence and was sent after another write was accepted must
//    carry a larger fence, or the same one with the same token. Writes the
//    resource refused as stale (cs fail "refused") wrote nothing; two
//    fence-checked writes are not judged by rule 2 (the store ordered
//    them, a holder stopped after its write overlaps harmlessly).
// Plus counts and liveness figures (acquire success rate and latency
// during the faults and after the heal).
#pragma once

#include "history.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::torture {

enum class violation_kind {
  lease_overlap,
  cs_overlap,
  lost_update,
  no_ttl_key,
  leftover_key,
  bogus_success,
  orphaned_votes,
  stale_write,
  fence_order,
};
inline constexpr violation_kind all_violation_kinds[] = {
    violation_kind::lease_overlap,  violation_kind::cs_overlap,   violation_kind::lost_update,
    violation_kind::no_ttl_key,     violation_kind::leftover_key, violation_kind::bogus_success,
    violation_kind::orphaned_votes, violation_kind::stale_write,  violation_kind::fence_order};
std::string_view name(violation_kind kind);
/// The kind with this name, if any.
std::optional<violation_kind> parse_violation_kind(std::string_view text);

/// How long a failed attempt's vote may stay on a healthy node: longer than
/// any attempt plus its undo (request timeouts are at most 500 ms), with room
/// for a loaded machine.
inline constexpr std::chrono::milliseconds orphan_grace{1000};

struct violation {
  violation_kind kind = violation_kind::lease_overlap;
  std::string res;
  std::string what;                  ///< One line.
  std::vector<std::string> details;  ///< The events involved, then the faults between them.
};

struct op_figures {
  std::size_t invoked = 0;
  std::size_t ok = 0;
  std::size_t failed = 0;
  std::map<std::string, std::size_t> errors;  ///< Failure text -> count.
};

struct liveness_figures {
  std::size_t attempts = 0;  ///< Acquires invoked in the phase that completed.
  std::size_t ok = 0;
  std::size_t refused = 0;  ///< Failed with not_acquired: another client held the lock.
  double success_rate = 0;  ///< ok / attempts; 0 without attempts.
  /// Neither acquired nor refused (no quorum answered in time): / attempts.
  double unavailable_rate = 0;
  double p50_ms = 0;  ///< Latency of the successful acquires, invoke to ok.
  double p99_ms = 0;
};

struct report {
  op_figures acquire, extend, release, cs;
  std::size_t leases = 0;
  /// Critical sections not inside their own lease: the holder overran its
  /// validity (harmless unless another owner got in meanwhile, which
  /// cs_overlap then reports).
  std::size_t cs_outside_lease = 0;
  /// Completed critical sections whose write is missing from the register.
  std::size_t lost_updates = 0;
  /// Votes of failed attempts that outlived orphan_grace on a node faulted
  /// around them (not violations: see rule 6).
  std::size_t orphans_near_faults = 0;
  std::size_t faults_injected = 0;
  std::size_t ttl_scans = 0;      ///< Node scans for keys without TTL.
  std::size_t client_pauses = 0;  ///< Client processes stopped (SIGSTOP).
  std::size_t fenced_acquires = 0;
  /// Register writes through the fence check the store accepted / refused.
  std::size_t fenced_writes_accepted = 0;
  std::size_t stale_writes_refused = 0;
  /// Writes judged stale by rule 8 (each also a violation).
  std::size_t stale_writes_accepted = 0;
  liveness_figures during_faults, after_heal;
  std::vector<violation> violations;
  std::vector<std::string> notes;  ///< Things worth knowing that are not violations.

  std::size_t count(violation_kind kind) const;
  std::size_t total_violations() const { return violations.size(); }
};

/// Checks a run. Never throws on odd histories: it reports what it can.
report check(const run_data& run);

/// Nearest-rank percentile (p in [0, 100]) of unsorted values; 0 when empty.
double percentile(std::vector<double> values, double p);

}  // namespace redlock::torture
