// The deliberate defects of the negative controls, each handed to a machine
// as a rule and shown to do exactly its damage: the machines read no
// process-wide switch. (settle_twice lives in the acquire's I/O shell; the
// torture program's "negative control settle_twice" shows it.)
#include "detail/negative_controls.hpp"
#include "detail/acquire_fsm.hpp"
#include "detail/quorum_fsm.hpp"
#include "machine_printing.hpp"

#include <catch2/catch.hpp>

// Named, so that a unity build can merge this file with the other tests.
namespace negative_controls_test {

using namespace std::chrono_literals;
using redlock::retry_policy;
using redlock::detail::acquire_fsm;
using redlock::detail::acquire_rules;
using redlock::detail::quorum_fsm;
using redlock::detail::round_rules;
using redlock::detail::vote;
using kind = acquire_fsm::action::kind;

namespace {

const redlock::clock::time_point t0{std::chrono::seconds(1000)};

double half() { return 0.5; }

const vote granted{vote::kind::granted, {}};

acquire_rules rules() {
  acquire_rules r;
  r.round.ttl = 10s;
  r.round.drift_factor = 0.01;
  r.request_timeout = 500ms;
  r.retry = retry_policy::fixed(100ms, 3, 0.0);
  return r;
}

/// Runs attempt 1 into its request timeout with node 0 granted: a failed
/// attempt that left a vote behind. Returns the action after the timeout.
acquire_fsm::action fail_first_attempt(acquire_fsm& fsm) {
  const auto first = fsm.start(t0);
  fsm.on_vote(1, 0, granted, t0 + 1ms);
  return fsm.on_timer(first.timer_id, t0 + 500ms);
}

}  // namespace

TEST_CASE("negative controls: every switch is off unless a test turns it on") {
  const auto& broken = redlock::detail::broken_on_purpose();
  CHECK_FALSE(broken.drop_drift);
  CHECK_FALSE(broken.count_late_votes);
  CHECK_FALSE(broken.skip_undo);
  CHECK_FALSE(broken.settle_twice);
}

TEST_CASE("negative controls: drop_drift promises the whole TTL") {
  round_rules honest;
  honest.ttl = 1000ms;
  honest.drift_factor = 0.01;
  auto broken = honest;
  broken.drop_drift = true;
  for (const auto& [rules, deadline] :
       {std::pair{honest, t0 + 1000ms - 12ms}, std::pair{broken, t0 + 1000ms}}) {
    quorum_fsm round(1, rules);
    round.start(t0);
    REQUIRE(round.on_granted(0, t0 + 1ms) == quorum_fsm::state::reached);
    CHECK(round.validity_deadline() == deadline);
  }
}

TEST_CASE("negative controls: count_late_votes counts a reply to an earlier attempt") {
  for (const bool late_votes_count : {false, true}) {
    auto r = rules();
    r.count_late_votes = late_votes_count;
    acquire_fsm fsm(3, r, &half);
    const auto undo = fail_first_attempt(fsm);
    REQUIRE(undo.what == kind::undo);
    const auto pause = fsm.on_undone(t0 + 501ms);
    fsm.on_timer(pause.timer_id, t0 + 601ms);
    REQUIRE(fsm.attempt() == 2);
    fsm.on_vote(1, 1, granted, t0 + 602ms);
    CHECK(fsm.round().granted() == (late_votes_count ? 1u : 0u));
  }
}

TEST_CASE("negative controls: skip_undo leaves a failed attempt's votes in place") {
  for (const bool skip : {false, true}) {
    auto r = rules();
    r.skip_undo = skip;
    acquire_fsm fsm(3, r, &half);
    const auto after_timeout = fail_first_attempt(fsm);
    // Honest: undo where the attempt's SETs may have landed. Broken: on to
    // the pause before the next attempt, the vote left on node 0.
    CHECK(after_timeout.what == (skip ? kind::pause : kind::undo));
  }
}

}  // namespace negative_controls_test
