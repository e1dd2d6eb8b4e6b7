// The quorum and validity rules, driven with a fake clock: no sockets.
#include "detail/quorum_fsm.hpp"
#include "machine_printing.hpp"

#include <catch2/catch.hpp>

// Named, so that a unity build can merge this file with the other tests.
namespace quorum_fsm_test {

using namespace std::chrono_literals;
using redlock::errc;
using redlock::node_outcome;
using redlock::detail::quorum_fsm;
using redlock::detail::round_rules;
using state = quorum_fsm::state;

namespace {

const redlock::clock::time_point t0{std::chrono::seconds(1000)};

round_rules rules_with_ttl(std::chrono::milliseconds ttl) {
  round_rules rules;
  rules.ttl = ttl;
  rules.drift_factor = 0.01;
  return rules;
}

/// An extend's rules: refusals mean lost, refusals mixed with failures do not.
round_rules extend_rules_with_ttl(std::chrono::milliseconds ttl) {
  auto rules = rules_with_ttl(ttl);
  rules.refusal_error = errc::lock_lost;
  rules.mixed_error = errc::quorum_unreachable;
  return rules;
}

}  // namespace

TEST_CASE("quorum is a majority of the configured nodes", "[unit][quorum]") {
  CHECK(redlock::detail::quorum_of(1) == 1);
  CHECK(redlock::detail::quorum_of(2) == 2);
  CHECK(redlock::detail::quorum_of(3) == 2);
  CHECK(redlock::detail::quorum_of(4) == 3);
  CHECK(redlock::detail::quorum_of(5) == 3);
  CHECK(redlock::detail::quorum_of(7) == 4);
}

TEST_CASE("drift allowance is ttl * factor + 2 ms", "[unit][quorum]") {
  CHECK(redlock::detail::drift_allowance(10000ms, 0.01) == 102ms);
  CHECK(redlock::detail::drift_allowance(1000ms, 0.0) == 2ms);
  CHECK(redlock::detail::drift_allowance(200ms, 0.05) == 12ms);
}

TEST_CASE("exact quorum is reached on the vote that completes it", "[unit][quorum]") {
  for (std::size_t n : {1u, 3u, 5u, 7u}) {
    DYNAMIC_SECTION("N = " << n) {
      quorum_fsm fsm(n, rules_with_ttl(10000ms));
      fsm.start(t0);
      const auto quorum = redlock::detail::quorum_of(n);
      for (std::size_t i = 0; i + 1 < quorum; ++i) {
        REQUIRE(fsm.on_granted(i, t0 + 1ms) == state::pending);
      }
      REQUIRE(fsm.on_granted(quorum - 1, t0 + 5ms) == state::reached);
      CHECK(fsm.granted() == quorum);
      CHECK(fsm.elapsed() == 5ms);
      // validity = ttl - drift, counted from the start of the round.
      CHECK(fsm.validity_deadline() == t0 + 10000ms - 102ms);
      // Nodes that have not answered stay pending: the round did not wait for them.
      for (std::size_t i = quorum; i < n; ++i) {
        CHECK(fsm.outcomes()[i].state == node_outcome::status::pending);
      }
    }
  }
}

TEST_CASE("one vote short of quorum fails as soon as the quorum is impossible", "[unit][quorum]") {
  for (std::size_t n : {3u, 5u, 7u}) {
    DYNAMIC_SECTION("N = " << n) {
      quorum_fsm fsm(n, rules_with_ttl(10000ms));
      fsm.start(t0);
      const auto quorum = redlock::detail::quorum_of(n);
      std::size_t node = 0;
      for (; node + 1 < quorum; ++node) REQUIRE(fsm.on_granted(node, t0) == state::pending);
      // The others refuse; the round fails on the refusal that leaves too few.
      const auto can_lose = n - quorum;
      for (std::size_t refused = 0; refused < can_lose; ++refused, ++node) {
        REQUIRE(fsm.on_refused(node, t0) == state::pending);
      }
      REQUIRE(fsm.on_refused(node, t0) == state::failed);
      CHECK(fsm.error() == errc::not_acquired);
      CHECK(fsm.granted() == quorum - 1);
    }
  }
}

TEST_CASE("N = 1 refused fails at once", "[unit][quorum]") {
  quorum_fsm fsm(1, rules_with_ttl(1000ms));
  fsm.start(t0);
  CHECK(fsm.on_refused(0, t0) == state::failed);
  CHECK(fsm.error() == errc::not_acquired);
}

TEST_CASE("late votes and repeated votes are not counted", "[unit][quorum]") {
  quorum_fsm fsm(5, rules_with_ttl(10000ms));
  fsm.start(t0);
  REQUIRE(fsm.on_granted(0, t0) == state::pending);
  // A second answer from the same node is not a second vote.
  REQUIRE(fsm.on_granted(0, t0) == state::pending);
  CHECK(fsm.granted() == 1);
  REQUIRE(fsm.on_granted(1, t0) == state::pending);

  // The request timeout ends the round; answers after it are ignored.
  REQUIRE(fsm.on_timeout(t0 + 50ms) == state::failed);
  CHECK(fsm.error() == errc::quorum_unreachable);
  CHECK(fsm.on_granted(2, t0 + 60ms) == state::failed);
  CHECK(fsm.on_granted(3, t0 + 60ms) == state::failed);
  CHECK(fsm.granted() == 2);
  CHECK(fsm.outcomes()[2].state == node_outcome::status::failed);
  CHECK(fsm.outcomes()[2].error == errc::node_timeout);

  // A vote after the quorum was reached changes nothing either.
  fsm.start(t0);
  fsm.on_granted(0, t0);
  fsm.on_granted(1, t0);
  REQUIRE(fsm.on_granted(2, t0 + 1ms) == state::reached);
  const auto deadline = fsm.validity_deadline();
  CHECK(fsm.on_refused(3, t0 + 2ms) == state::reached);
  CHECK(fsm.refused() == 0);
  CHECK(fsm.validity_deadline() == deadline);
}

TEST_CASE("votes for another node index than configured are ignored", "[unit][quorum]") {
  quorum_fsm fsm(3, rules_with_ttl(1000ms));
  fsm.start(t0);
  CHECK(fsm.on_granted(7, t0) == state::pending);
  CHECK(fsm.granted() == 0);
}

TEST_CASE("a restarted round forgets the previous one", "[unit][quorum]") {
  quorum_fsm fsm(3, rules_with_ttl(1000ms));
  fsm.start(t0);
  fsm.on_refused(0, t0);
  fsm.on_refused(1, t0);
  REQUIRE(fsm.current() == state::failed);
  fsm.start(t0 + 100ms);
  CHECK(fsm.current() == state::pending);
  CHECK(fsm.refused() == 0);
  CHECK_FALSE(fsm.error());
  fsm.on_granted(0, t0 + 101ms);
  CHECK(fsm.on_granted(1, t0 + 102ms) == state::reached);
}

TEST_CASE("the drift edge: validity must stay positive", "[unit][quorum][validity]") {
  // ttl 1000 ms, drift 12 ms: validity = 988 ms - elapsed.
  const auto ttl = 1000ms;
  const auto drift = redlock::detail::drift_allowance(ttl, 0.01);
  REQUIRE(drift == 12ms);

  SECTION("one nanosecond of validity left is enough") {
    quorum_fsm fsm(3, rules_with_ttl(ttl));
    fsm.start(t0);
    fsm.on_granted(0, t0);
    const auto last_moment = t0 + ttl - drift - std::chrono::nanoseconds(1);
    REQUIRE(fsm.on_granted(1, last_moment) == state::reached);
    CHECK(fsm.validity_deadline() - last_moment == std::chrono::nanoseconds(1));
  }
  SECTION("none left fails with validity_expired") {
    quorum_fsm fsm(3, rules_with_ttl(ttl));
    fsm.start(t0);
    fsm.on_granted(0, t0);
    REQUIRE(fsm.on_granted(1, t0 + ttl - drift) == state::failed);
    CHECK(fsm.error() == errc::validity_expired);
  }
  SECTION("a configured minimum validity raises the bar") {
    auto rules = rules_with_ttl(ttl);
    rules.min_validity = 500ms;
    quorum_fsm fsm(3, rules);
    fsm.start(t0);
    fsm.on_granted(0, t0);
    REQUIRE(fsm.on_granted(1, t0 + 489ms) == state::failed);
    CHECK(fsm.error() == errc::validity_expired);
    fsm.start(t0);
    fsm.on_granted(0, t0);
    CHECK(fsm.on_granted(1, t0 + 487ms) == state::reached);
  }
}

TEST_CASE("all nodes timing out fails with quorum_unreachable", "[unit][quorum]") {
  for (std::size_t n : {1u, 3u, 5u, 7u}) {
    DYNAMIC_SECTION("N = " << n) {
      quorum_fsm fsm(n, rules_with_ttl(10000ms));
      fsm.start(t0);
      REQUIRE(fsm.on_timeout(t0 + 500ms) == state::failed);
      CHECK(fsm.error() == errc::quorum_unreachable);
      CHECK(fsm.failed() == n);
      for (const auto& outcome : fsm.outcomes()) {
        CHECK(outcome.state == node_outcome::status::failed);
        CHECK(outcome.error == errc::node_timeout);
      }
    }
  }
}

TEST_CASE("a timeout with the quorum still possible but not reached fails", "[unit][quorum]") {
  quorum_fsm fsm(5, rules_with_ttl(10000ms));
  fsm.start(t0);
  fsm.on_granted(0, t0);
  fsm.on_granted(1, t0);
  REQUIRE(fsm.on_timeout(t0 + 500ms) == state::failed);
  CHECK(fsm.error() == errc::quorum_unreachable);
}

TEST_CASE("failures decide the error only when they alone sink the round", "[unit][quorum]") {
  const auto refused_error = redlock::make_error_code(errc::server_error);
  SECTION("2 held elsewhere + 1 down of 5: held elsewhere is the cause") {
    quorum_fsm fsm(5, rules_with_ttl(10000ms));
    fsm.start(t0);
    fsm.on_refused(0, t0);
    fsm.on_refused(1, t0);
    REQUIRE(fsm.on_failed(2, refused_error, t0) == state::failed);
    CHECK(fsm.error() == errc::not_acquired);
  }
  SECTION("3 down of 5: quorum unreachable") {
    quorum_fsm fsm(5, rules_with_ttl(10000ms));
    fsm.start(t0);
    fsm.on_failed(0, refused_error, t0);
    fsm.on_granted(1, t0);
    fsm.on_failed(2, refused_error, t0);
    REQUIRE(fsm.on_failed(3, refused_error, t0) == state::failed);
    CHECK(fsm.error() == errc::quorum_unreachable);
  }
  SECTION("wrong credentials everywhere that failed are reported as such") {
    quorum_fsm fsm(3, rules_with_ttl(10000ms));
    fsm.start(t0);
    fsm.on_failed(0, errc::authentication_failed, t0);
    REQUIRE(fsm.on_failed(1, errc::authentication_failed, t0) == state::failed);
    CHECK(fsm.error() == errc::authentication_failed);
  }
  SECTION("wrong credentials on most failed nodes are named even when another is down") {
    quorum_fsm fsm(5, rules_with_ttl(10000ms));
    fsm.start(t0);
    fsm.on_failed(0, errc::node_unavailable, t0);
    fsm.on_failed(1, errc::authentication_failed, t0);
    REQUIRE(fsm.on_failed(2, errc::authentication_failed, t0) == state::failed);
    CHECK(fsm.error() == errc::authentication_failed);
  }
  SECTION("down nodes outnumbering wrong credentials are quorum unreachable") {
    quorum_fsm fsm(5, rules_with_ttl(10000ms));
    fsm.start(t0);
    fsm.on_failed(0, errc::node_unavailable, t0);
    fsm.on_failed(1, errc::authentication_failed, t0);
    REQUIRE(fsm.on_failed(2, errc::node_timeout, t0) == state::failed);
    CHECK(fsm.error() == errc::quorum_unreachable);
  }
  SECTION("a majority of replicas is named as such") {
    quorum_fsm fsm(3, rules_with_ttl(10000ms));
    fsm.start(t0);
    fsm.on_failed(0, errc::replica_node, t0);
    REQUIRE(fsm.on_failed(2, errc::replica_node, t0) == state::failed);
    CHECK(fsm.error() == errc::replica_node);
  }
  SECTION("certificates that do not verify on most failed nodes name the first cause") {
    const redlock::error_code expired(10, redlock::tls_verify_category());
    const redlock::error_code mismatch(62, redlock::tls_verify_category());
    quorum_fsm fsm(5, rules_with_ttl(10000ms));
    fsm.start(t0);
    fsm.on_failed(0, errc::node_unavailable, t0);
    fsm.on_failed(3, expired, t0);
    REQUIRE(fsm.on_failed(4, mismatch, t0) == state::failed);
    CHECK(fsm.error() == expired);
  }
  SECTION("mixed failures are quorum unreachable") {
    quorum_fsm fsm(3, rules_with_ttl(10000ms));
    fsm.start(t0);
    fsm.on_failed(0, errc::authentication_failed, t0);
    REQUIRE(fsm.on_failed(1, errc::node_unavailable, t0) == state::failed);
    CHECK(fsm.error() == errc::quorum_unreachable);
  }
}

TEST_CASE("extend rules: refusals mean lost, quorum after the old deadline is too late",
          "[unit][quorum][extend]") {
  auto rules = rules_with_ttl(2000ms);
  rules.refusal_error = errc::lock_lost;
  rules.hard_deadline = t0 + 100ms;

  SECTION("refused on a majority: lock lost") {
    quorum_fsm fsm(3, rules);
    fsm.start(t0);
    fsm.on_refused(0, t0 + 1ms);
    REQUIRE(fsm.on_refused(1, t0 + 1ms) == state::failed);
    CHECK(fsm.error() == errc::lock_lost);
  }
  SECTION("quorum before the old deadline: new validity from the start of the extend") {
    quorum_fsm fsm(3, rules);
    fsm.start(t0);
    fsm.on_granted(0, t0 + 10ms);
    REQUIRE(fsm.on_granted(1, t0 + 20ms) == state::reached);
    CHECK(fsm.validity_deadline() == t0 + 2000ms - 22ms);
  }
  SECTION("quorum at the old deadline: too late") {
    quorum_fsm fsm(3, rules);
    fsm.start(t0);
    fsm.on_granted(0, t0 + 10ms);
    REQUIRE(fsm.on_granted(1, t0 + 100ms) == state::failed);
    CHECK(fsm.error() == errc::lock_expired);
  }
}

// Review finding: an extend reported lock_lost (and ended the handle's
// validity) when a refusal and failures together sank the round, although a
// majority may still hold the key: only refusals alone prove it lost.
TEST_CASE("extend rules: refusals mixed with failures are not a lost lock",
          "[unit][quorum][extend]") {
  auto rules = extend_rules_with_ttl(2000ms);
  SECTION("1 not ours + 2 down of 5") {
    quorum_fsm fsm(5, rules);
    fsm.start(t0);
    fsm.on_granted(0, t0 + 1ms);
    fsm.on_refused(1, t0 + 1ms);
    fsm.on_failed(2, errc::node_unavailable, t0 + 1ms);
    REQUIRE(fsm.on_failed(3, errc::node_unavailable, t0 + 1ms) == state::failed);
    CHECK(fsm.error() == errc::quorum_unreachable);
  }
  SECTION("2 not ours + 1 timed out of 5") {
    quorum_fsm fsm(5, rules);
    fsm.start(t0);
    fsm.on_refused(0, t0 + 1ms);
    fsm.on_refused(1, t0 + 1ms);
    REQUIRE(fsm.on_timeout(t0 + 50ms) == state::failed);
    CHECK(fsm.error() == errc::quorum_unreachable);
  }
  SECTION("3 not ours of 5: lost") {
    quorum_fsm fsm(5, rules);
    fsm.start(t0);
    fsm.on_refused(0, t0 + 1ms);
    fsm.on_refused(1, t0 + 1ms);
    REQUIRE(fsm.on_refused(2, t0 + 1ms) == state::failed);
    CHECK(fsm.error() == errc::lock_lost);
  }
}

// Review finding: an extend whose request timer was cut short by the old
// validity reported quorum_unreachable; the lock had expired.
TEST_CASE("extend rules: a round that fails at or after the old deadline is lock_expired",
          "[unit][quorum][extend]") {
  auto rules = extend_rules_with_ttl(2000ms);
  rules.hard_deadline = t0 + 100ms;
  quorum_fsm fsm(3, rules);
  fsm.start(t0);
  fsm.on_granted(0, t0 + 1ms);
  SECTION("the timer set at the old deadline") {
    REQUIRE(fsm.on_timeout(t0 + 100ms) == state::failed);
    CHECK(fsm.error() == errc::lock_expired);
  }
  SECTION("failures before the deadline stay what they are") {
    fsm.on_failed(1, errc::node_unavailable, t0 + 2ms);
    REQUIRE(fsm.on_failed(2, errc::node_unavailable, t0 + 2ms) == state::failed);
    CHECK(fsm.error() == errc::quorum_unreachable);
  }
}

// Review finding: whether an extend said lock_lost depended on the order of
// the answers: a failure arriving before the second refusal decided the
// round as mixed, and the refusal that would have proved it lost was ignored.
TEST_CASE("extend rules: lost or not does not depend on the order of the answers",
          "[unit][quorum][extend]") {
  auto rules = extend_rules_with_ttl(2000ms);
  rules.prove_refusals = true;
  SECTION("failure first: waits for the node that could still refuse") {
    quorum_fsm fsm(3, rules);
    fsm.start(t0);
    CHECK(fsm.on_failed(0, errc::node_unavailable, t0 + 1ms) == state::pending);
    CHECK(fsm.on_refused(1, t0 + 2ms) == state::pending);
    REQUIRE(fsm.on_refused(2, t0 + 3ms) == state::failed);
    CHECK(fsm.error() == errc::lock_lost);
  }
  SECTION("refusals first") {
    quorum_fsm fsm(3, rules);
    fsm.start(t0);
    fsm.on_refused(1, t0 + 1ms);
    REQUIRE(fsm.on_refused(2, t0 + 2ms) == state::failed);
    CHECK(fsm.error() == errc::lock_lost);
  }
  SECTION("the last node silent: the timeout decides, mixed") {
    quorum_fsm fsm(3, rules);
    fsm.start(t0);
    fsm.on_failed(0, errc::node_unavailable, t0 + 1ms);
    CHECK(fsm.on_refused(1, t0 + 2ms) == state::pending);
    REQUIRE(fsm.on_timeout(t0 + 50ms) == state::failed);
    CHECK(fsm.error() == errc::quorum_unreachable);
  }
  SECTION("without the rule (acquire) the round fails at once") {
    rules.prove_refusals = false;
    quorum_fsm fsm(3, rules);
    fsm.start(t0);
    fsm.on_failed(0, errc::node_unavailable, t0 + 1ms);
    CHECK(fsm.on_refused(1, t0 + 2ms) == state::failed);
  }
}

// Second review: nodes held by another owner at acquire time could not hold
// our key, but the wait for deciding answers ignored them, so the verdict
// still depended on the order of the answers.
TEST_CASE("extend rules: nodes that never held the key count with the refusals",
          "[unit][quorum][extend]") {
  auto rules = extend_rules_with_ttl(2000ms);
  rules.prove_refusals = true;
  rules.never_holders = 1U << 0;  // node 0 refused our acquire
  SECTION("nodes 0-2 fail first, then 3 and 4 say not ours") {
    quorum_fsm fsm(5, rules);
    fsm.start(t0);
    fsm.on_failed(0, errc::node_unavailable, t0 + 1ms);
    fsm.on_failed(1, errc::node_unavailable, t0 + 1ms);
    CHECK(fsm.on_failed(2, errc::node_unavailable, t0 + 1ms) == state::pending);
    CHECK(fsm.on_refused(3, t0 + 2ms) == state::pending);
    REQUIRE(fsm.on_refused(4, t0 + 3ms) == state::failed);
    CHECK(fsm.error() == errc::lock_lost);
  }
  SECTION("3 and 4 say not ours first") {
    quorum_fsm fsm(5, rules);
    fsm.start(t0);
    fsm.on_refused(3, t0 + 1ms);
    fsm.on_refused(4, t0 + 1ms);
    fsm.on_failed(0, errc::node_unavailable, t0 + 2ms);
    REQUIRE(fsm.on_failed(1, errc::node_unavailable, t0 + 2ms) == state::failed);
    CHECK(fsm.error() == errc::lock_lost);
  }
  SECTION("only node 0 and one other ruled out: the rest may hold it") {
    quorum_fsm fsm(5, rules);
    fsm.start(t0);
    fsm.on_refused(4, t0 + 1ms);
    fsm.on_failed(1, errc::node_unavailable, t0 + 1ms);
    fsm.on_failed(2, errc::node_unavailable, t0 + 1ms);
    REQUIRE(fsm.on_failed(3, errc::node_unavailable, t0 + 1ms) == state::failed);
    CHECK(fsm.error() == errc::quorum_unreachable);
  }
}

}  // namespace quorum_fsm_test
