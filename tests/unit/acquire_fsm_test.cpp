// The decisions of an acquire, driven with a fake clock and simulated votes:
// no sockets. Each test asserts the action the machine returns.
#include "detail/acquire_fsm.hpp"
#include "machine_printing.hpp"

#include <openssl/x509_vfy.h>
#include <boost/asio/error.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

// Named, so that a unity build can merge this file with the other tests.
namespace acquire_fsm_test {

using namespace std::chrono_literals;
using redlock::errc;
using redlock::retry_policy;
using redlock::detail::acquire_fsm;
using redlock::detail::acquire_rules;
using redlock::detail::undo_plan;
using redlock::detail::undo_role;
using redlock::detail::vote;
using kind = acquire_fsm::action::kind;
using phase = acquire_fsm::phase;

namespace {

const redlock::clock::time_point t0{std::chrono::seconds(1000)};

double half() { return 0.5; }

const vote granted{vote::kind::granted, {}};
const vote refused{vote::kind::refused, {}};
vote failed(errc e = errc::server_error) { return {vote::kind::failed, make_error_code(e)}; }

acquire_rules rules(unsigned attempts = 3, bool wake_on_release = true) {
  acquire_rules r;
  r.round.ttl = 10s;
  r.round.drift_factor = 0.01;
  r.request_timeout = 500ms;
  r.retry = retry_policy::fixed(100ms, attempts, 0.0);
  r.retry.wake_on_release = wake_on_release;
  return r;
}

}  // namespace

TEST_CASE("acquire_fsm: a quorum of grants completes with success once", "[unit][acquire_fsm]") {
  acquire_fsm fsm(5, rules(), &half);
  auto a = fsm.start(t0);
  REQUIRE(a.what == kind::send_attempt);
  CHECK(a.at == t0 + 500ms);
  CHECK(fsm.attempt() == 1);
  CHECK(fsm.on_vote(1, 0, granted, t0 + 1ms).what == kind::none);
  CHECK(fsm.on_vote(1, 1, granted, t0 + 1ms).what == kind::none);
  const auto done = fsm.on_vote(1, 2, granted, t0 + 2ms);
  CHECK(done.what == kind::complete);
  CHECK_FALSE(done.error);
  CHECK(fsm.round().validity_deadline() == t0 + 10s - 102ms);
  // Nothing afterwards does anything: a late vote, the request timer that was
  // already queued, a wake-up, a cancellation.
  CHECK(fsm.on_vote(1, 3, refused, t0 + 3ms).what == kind::none);
  CHECK(fsm.on_timer(a.timer_id, t0 + 500ms).what == kind::none);
  CHECK(fsm.on_release_seen(true, t0 + 4ms).what == kind::none);
  CHECK(fsm.on_cancel(t0 + 5ms).what == kind::none);
  CHECK(fsm.done());
}

// Defect: a reply deciding failure and the request timer firing in the same
// reactor cycle settled the attempt twice (second undo, reused pause timer,
// at worst success with an empty lock).
TEST_CASE("acquire_fsm: a timer already queued when a reply decided the attempt does nothing",
          "[unit][acquire_fsm]") {
  acquire_fsm fsm(5, rules(), &half);
  const auto attempt = fsm.start(t0);
  fsm.on_vote(1, 0, granted, t0 + 1ms);
  fsm.on_vote(1, 1, refused, t0 + 499ms);
  fsm.on_vote(1, 2, refused, t0 + 499ms);
  const auto undo = fsm.on_vote(1, 3, refused, t0 + 500ms);
  REQUIRE(undo.what == kind::undo);
  CHECK(undo.undo == undo_plan{undo_role::send_and_await, undo_role::skip, undo_role::skip,
                               undo_role::skip, undo_role::send});
  // The timer handler had been queued with success before it was cancelled.
  CHECK(fsm.on_timer(attempt.timer_id, t0 + 500ms).what == kind::none);
  CHECK(fsm.current() == phase::undoing);
  const auto pause = fsm.on_undone(t0 + 501ms);
  REQUIRE(pause.what == kind::pause);
  CHECK(pause.at == t0 + 501ms + 100ms);
  CHECK(pause.wait_for_release);
  // A second undo completion, or the stale timer again, changes nothing.
  CHECK(fsm.on_undone(t0 + 502ms).what == kind::none);
  CHECK(fsm.on_timer(attempt.timer_id, t0 + 503ms).what == kind::none);
  // The pause's own timer starts attempt 2, once.
  const auto next = fsm.on_timer(pause.timer_id, t0 + 601ms);
  CHECK(next.what == kind::send_attempt);
  CHECK(fsm.attempt() == 2);
  CHECK(fsm.on_timer(pause.timer_id, t0 + 601ms).what == kind::none);
}

TEST_CASE("acquire_fsm: the timeout fails the nodes still pending and undoes where SETs may land",
          "[unit][acquire_fsm]") {
  acquire_fsm fsm(3, rules(1), &half);
  const auto attempt = fsm.start(t0);
  fsm.on_vote(1, 0, granted, t0 + 1ms);
  const auto undo = fsm.on_timer(attempt.timer_id, t0 + 500ms);
  REQUIRE(undo.what == kind::undo);
  CHECK(undo.undo == undo_plan{undo_role::send_and_await, undo_role::send, undo_role::send});
  // A reply after the timeout is no vote.
  CHECK(fsm.on_vote(1, 1, granted, t0 + 501ms).what == kind::none);
  const auto done = fsm.on_undone(t0 + 502ms);
  CHECK(done.what == kind::complete);
  CHECK(done.error == errc::quorum_unreachable);
}

TEST_CASE("acquire_fsm: refused everywhere needs no undo", "[unit][acquire_fsm]") {
  acquire_fsm fsm(3, rules(1), &half);
  fsm.start(t0);
  fsm.on_vote(1, 0, refused, t0 + 1ms);
  const auto done = fsm.on_vote(1, 1, refused, t0 + 1ms);
  // Two refusals rule the quorum out; node 2 has not answered, so its SET
  // may still land: undo there.
  REQUIRE(done.what == kind::undo);
  CHECK(done.undo == undo_plan{undo_role::skip, undo_role::skip, undo_role::send});

  acquire_fsm all_refused(1, rules(1), &half);
  all_refused.start(t0);
  const auto over = all_refused.on_vote(1, 0, refused, t0 + 1ms);
  CHECK(over.what == kind::complete);
  CHECK(over.error == errc::not_acquired);
}

TEST_CASE("acquire_fsm: a reply to an earlier attempt is never a vote", "[unit][acquire_fsm]") {
  acquire_fsm fsm(3, rules(), &half);
  auto first = fsm.start(t0);
  fsm.on_timer(first.timer_id, t0 + 500ms);  // all three late: undo
  const auto pause = fsm.on_undone(t0 + 501ms);
  fsm.on_timer(pause.timer_id, t0 + 601ms);
  REQUIRE(fsm.attempt() == 2);
  CHECK(fsm.on_vote(1, 0, granted, t0 + 602ms).what == kind::none);
  CHECK(fsm.on_vote(1, 1, granted, t0 + 602ms).what == kind::none);
  CHECK(fsm.round().granted() == 0);
}

TEST_CASE("acquire_fsm: a release seen while attempting makes the retry immediate",
          "[unit][acquire_fsm]") {
  acquire_fsm fsm(1, rules(), &half);
  fsm.start(t0);
  CHECK(fsm.on_release_seen(true, t0 + 1ms).what == kind::none);
  const auto over = fsm.on_vote(1, 0, refused, t0 + 2ms);
  REQUIRE(over.what == kind::pause);
  CHECK(over.at == t0 + 2ms);  // our own release: no delay, no jitter
}

TEST_CASE(
    "acquire_fsm: while pausing, our own release starts an attempt at once, another's "
    "after jitter",
    "[unit][acquire_fsm]") {
  acquire_fsm fsm(1, rules(), &half);
  fsm.start(t0);
  const auto pause = fsm.on_vote(1, 0, refused, t0 + 1ms);
  REQUIRE(pause.what == kind::pause);
  const auto jittered = fsm.on_release_seen(false, t0 + 10ms);
  REQUIRE(jittered.what == kind::pause);
  CHECK(jittered.at == t0 + 10ms + 250us);  // 500 us * 0.5 / attempt 1
  CHECK(jittered.timer_id != pause.timer_id);
  CHECK(fsm.on_timer(pause.timer_id, t0 + 101ms).what == kind::none);  // re-armed: stale
  const auto now = fsm.on_release_seen(true, t0 + 10ms);
  CHECK(now.what == kind::send_attempt);
  CHECK(fsm.attempt() == 2);
}

TEST_CASE("acquire_fsm: no release wait unless held elsewhere and wake_on_release",
          "[unit][acquire_fsm]") {
  acquire_fsm unreachable(3, rules(), &half);
  const auto a = unreachable.start(t0);
  const auto undo = unreachable.on_timer(a.timer_id, t0 + 500ms);
  REQUIRE(undo.what == kind::undo);
  CHECK_FALSE(unreachable.on_undone(t0 + 501ms).wait_for_release);

  acquire_fsm polling(1, rules(3, false), &half);
  polling.start(t0);
  const auto pause = polling.on_vote(1, 0, refused, t0 + 1ms);
  REQUIRE(pause.what == kind::pause);
  CHECK_FALSE(pause.wait_for_release);
}

TEST_CASE("acquire_fsm: the wait timeout ends retries, after listening for a release until it",
          "[unit][acquire_fsm]") {
  auto r = rules(0);
  r.wait_timeout = 150ms;
  acquire_fsm fsm(1, r, &half);
  fsm.start(t0);
  const auto pause = fsm.on_vote(1, 0, refused, t0 + 1ms);  // retry at 101 ms
  REQUIRE(pause.what == kind::pause);
  REQUIRE(fsm.on_timer(pause.timer_id, t0 + 101ms).what == kind::send_attempt);
  // A retry at 202 ms would be too late; a release may still come before
  // the deadline, so it listens until then.
  const auto last = fsm.on_vote(2, 0, refused, t0 + 102ms);
  REQUIRE(last.what == kind::pause);
  CHECK(last.at == t0 + 150ms);
  CHECK(last.wait_for_release);
  SECTION("no release by then: not acquired") {
    const auto over = fsm.on_timer(last.timer_id, t0 + 150ms);
    CHECK(over.what == kind::complete);
    CHECK(over.error == errc::not_acquired);
  }
  SECTION("a release before the deadline: one more attempt") {
    const auto jittered = fsm.on_release_seen(false, t0 + 120ms);
    REQUIRE(jittered.what == kind::pause);
    CHECK(jittered.at <= t0 + 150ms);
    CHECK(fsm.on_timer(jittered.timer_id, jittered.at).what == kind::send_attempt);
  }
  SECTION("without wake_on_release it gives up at once") {
    auto no_wake = rules(0, false);
    no_wake.wait_timeout = 150ms;
    acquire_fsm plain(1, no_wake, &half);
    plain.start(t0);
    const auto p = plain.on_vote(1, 0, refused, t0 + 1ms);
    REQUIRE(plain.on_timer(p.timer_id, t0 + 101ms).what == kind::send_attempt);
    const auto over = plain.on_vote(2, 0, refused, t0 + 102ms);
    CHECK(over.what == kind::complete);
    CHECK(over.error == errc::not_acquired);
  }
}

TEST_CASE("acquire_fsm: cancelling an attempt undoes it first, then completes aborted",
          "[unit][acquire_fsm]") {
  acquire_fsm fsm(3, rules(), &half);
  const auto a = fsm.start(t0);
  fsm.on_vote(1, 0, granted, t0 + 1ms);
  const auto undo = fsm.on_cancel(t0 + 2ms);
  REQUIRE(undo.what == kind::undo);
  CHECK(undo.undo == undo_plan{undo_role::send_and_await, undo_role::send, undo_role::send});
  CHECK(fsm.on_vote(1, 1, granted, t0 + 3ms).what == kind::none);
  CHECK(fsm.on_timer(a.timer_id, t0 + 500ms).what == kind::none);
  CHECK(fsm.on_cancel(t0 + 4ms).what == kind::none);
  const auto done = fsm.on_undone(t0 + 5ms);
  CHECK(done.what == kind::complete);
  CHECK(done.error == boost::asio::error::operation_aborted);
}

TEST_CASE("acquire_fsm: cancelling during an undo or a pause", "[unit][acquire_fsm]") {
  acquire_fsm undoing(1, rules(), &half);
  const auto a = undoing.start(t0);
  REQUIRE(undoing.on_timer(a.timer_id, t0 + 500ms).what == kind::undo);
  CHECK(undoing.on_cancel(t0 + 501ms).what == kind::none);
  const auto done = undoing.on_undone(t0 + 502ms);
  CHECK(done.what == kind::complete);
  CHECK(done.error == boost::asio::error::operation_aborted);

  acquire_fsm pausing(1, rules(), &half);
  pausing.start(t0);
  const auto pause = pausing.on_vote(1, 0, refused, t0 + 1ms);
  REQUIRE(pause.what == kind::pause);
  const auto aborted = pausing.on_cancel(t0 + 2ms);
  CHECK(aborted.what == kind::complete);
  CHECK(aborted.error == boost::asio::error::operation_aborted);
  CHECK(pausing.on_timer(pause.timer_id, t0 + 101ms).what == kind::none);
}

TEST_CASE("acquire_fsm: a quorum too late fails with validity_expired and is undone",
          "[unit][acquire_fsm]") {
  auto r = rules(1);
  r.round.ttl = 1000ms;
  r.request_timeout = 2000ms;
  acquire_fsm fsm(3, r, &half);
  fsm.start(t0);
  fsm.on_vote(1, 0, granted, t0 + 1ms);
  const auto undo = fsm.on_vote(1, 1, granted, t0 + 995ms);  // validity 1000-12-995 < 0
  REQUIRE(undo.what == kind::undo);
  CHECK(undo.undo ==
        undo_plan{undo_role::send_and_await, undo_role::send_and_await, undo_role::send});
  const auto done = fsm.on_undone(t0 + 996ms);
  CHECK(done.error == errc::validity_expired);
}

TEST_CASE("acquire_fsm: failing nodes sink the round, and the undo covers them",
          "[unit][acquire_fsm]") {
  acquire_fsm fsm(3, rules(1), &half);
  fsm.start(t0);
  fsm.on_vote(1, 0, failed(), t0 + 1ms);
  const auto undo = fsm.on_vote(1, 1, failed(errc::node_unavailable), t0 + 2ms);
  REQUIRE(undo.what == kind::undo);
  CHECK(undo.undo == undo_plan{undo_role::send, undo_role::send, undo_role::send});
  const auto done = fsm.on_undone(t0 + 3ms);
  CHECK(done.error == errc::quorum_unreachable);
}

// Review finding: a waiter woken by a release that then gave up (cancelled,
// or out of attempts) kept the wake-up to itself; the next waiter slept
// until its retry delay although the resource was free.
TEST_CASE("acquire_fsm: a wake-up not used by an attempt is passed on when giving up",
          "[unit][acquire_fsm]") {
  acquire_fsm fsm(1, rules(), &half);
  fsm.start(t0);
  REQUIRE(fsm.on_vote(1, 0, refused, t0 + 1ms).what == kind::pause);

  SECTION("cancelled in the jitter pause after another client's release") {
    REQUIRE(fsm.on_release_seen(false, t0 + 10ms).what == kind::pause);
    const auto done = fsm.on_cancel(t0 + 10ms);
    REQUIRE(done.what == kind::complete);
    CHECK(done.error == boost::asio::error::operation_aborted);
    CHECK(done.pass_on_wake);
    CHECK_FALSE(done.wake_here);
  }
  SECTION("cancelled during the attempt our own release started") {
    REQUIRE(fsm.on_release_seen(true, t0 + 10ms).what == kind::send_attempt);
    const auto undo = fsm.on_cancel(t0 + 11ms);
    REQUIRE(undo.what == kind::undo);
    const auto done = fsm.on_undone(t0 + 12ms);
    REQUIRE(done.what == kind::complete);
    CHECK(done.pass_on_wake);
    CHECK(done.wake_here);
  }
  SECTION("the attempt after the wake-up was refused by the nodes: it was used") {
    REQUIRE(fsm.on_release_seen(true, t0 + 10ms).what == kind::send_attempt);
    REQUIRE(fsm.on_vote(2, 0, refused, t0 + 11ms).what == kind::pause);
    const auto done = fsm.on_cancel(t0 + 12ms);
    REQUIRE(done.what == kind::complete);
    CHECK_FALSE(done.pass_on_wake);
  }
  SECTION("a release during an attempt sent before it is still unspent when attempts run out") {
    auto last = rules(2);
    acquire_fsm two(1, last, &half);
    two.start(t0);
    const auto pause = two.on_vote(1, 0, refused, t0 + 1ms);
    REQUIRE(pause.what == kind::pause);
    const auto second = two.on_timer(pause.timer_id, t0 + 101ms);
    REQUIRE(second.what == kind::send_attempt);
    // The release arrives while the second (last) attempt, sent before it,
    // is being refused.
    CHECK(two.on_release_seen(false, t0 + 102ms).what == kind::none);
    const auto done = two.on_vote(2, 0, refused, t0 + 103ms);
    REQUIRE(done.what == kind::complete);
    CHECK(done.error == errc::not_acquired);
    CHECK(done.pass_on_wake);
  }
  // Review finding: a second wake-up that came during the attempt made for
  // the first was cleared with the first when that attempt was answered.
  SECTION("a wake-up during the attempt made for an earlier one is still unused") {
    auto last = rules(3);
    acquire_fsm three(1, last, &half);
    three.start(t0);
    REQUIRE(three.on_vote(1, 0, refused, t0 + 1ms).what == kind::pause);
    const auto jitter = three.on_release_seen(false, t0 + 10ms);
    REQUIRE(jitter.what == kind::pause);
    REQUIRE(three.on_timer(jitter.timer_id, t0 + 11ms).what == kind::send_attempt);
    CHECK(three.on_release_seen(false, t0 + 12ms).what == kind::none);  // the second
    const auto pause = three.on_vote(2, 0, refused, t0 + 13ms);
    REQUIRE(pause.what == kind::pause);
    const auto done = three.on_cancel(t0 + 14ms);
    REQUIRE(done.what == kind::complete);
    CHECK(done.pass_on_wake);
  }
  SECTION("an attempt after the wake-up that timed out did not use it") {
    const auto attempt = fsm.on_release_seen(true, t0 + 10ms);
    REQUIRE(attempt.what == kind::send_attempt);
    const auto undo = fsm.on_timer(attempt.timer_id, t0 + 510ms);
    REQUIRE(undo.what == kind::undo);
    REQUIRE(fsm.on_undone(t0 + 511ms).what == kind::pause);
    const auto done = fsm.on_cancel(t0 + 512ms);
    REQUIRE(done.what == kind::complete);
    CHECK(done.pass_on_wake);
    CHECK(done.wake_here);
  }
  // Second review: an attempt that failed fast on nodes that are down did
  // not test the resource, and a wake-up from our own release that was used
  // must not make a later, announced one look like ours.
  SECTION("an attempt that only failed fast did not use it") {
    REQUIRE(fsm.on_release_seen(false, t0 + 10ms).what == kind::pause);
    const auto jittered = fsm.on_release_seen(false, t0 + 10ms);
    const auto attempt = fsm.on_timer(jittered.timer_id, t0 + 11ms);
    REQUIRE(attempt.what == kind::send_attempt);
    const auto undo = fsm.on_vote(2, 0, failed(errc::node_unavailable), t0 + 12ms);
    REQUIRE(undo.what == kind::undo);
    fsm.on_undone(t0 + 13ms);
    const auto done = fsm.on_cancel(t0 + 14ms);
    REQUIRE(done.what == kind::complete);
    CHECK(done.pass_on_wake);
  }
  SECTION("a used wake-up from our own release does not make a later one ours") {
    REQUIRE(fsm.on_release_seen(true, t0 + 10ms).what == kind::send_attempt);
    CHECK(fsm.on_release_seen(false, t0 + 11ms).what == kind::none);  // announced
    REQUIRE(fsm.on_vote(2, 0, refused, t0 + 12ms).what == kind::pause);
    const auto done = fsm.on_cancel(t0 + 13ms);
    REQUIRE(done.what == kind::complete);
    CHECK(done.pass_on_wake);
    CHECK_FALSE(done.wake_here);
  }
  SECTION("success keeps it") {
    const auto attempt = fsm.on_release_seen(true, t0 + 10ms);
    REQUIRE(attempt.what == kind::send_attempt);
    const auto done = fsm.on_vote(2, 0, granted, t0 + 11ms);
    REQUIRE(done.what == kind::complete);
    CHECK_FALSE(done.error);
    CHECK_FALSE(done.pass_on_wake);
  }
}

namespace {

/// Where a run of failed attempts ended: the completion, when it came, and
/// the start of every attempt.
struct run_outcome {
  acquire_fsm::action done;
  redlock::clock::time_point at{};
  std::vector<redlock::clock::time_point> attempts;
};

/// Drives `fsm` from t0: each attempt gets `answer(attempt, node)` from
/// every node 1 ms after it starts, undos take 1 ms, pauses last until
/// their timer. Stops at completion (or after 10000 attempts).
template <class Answer>
run_outcome run_attempts(acquire_fsm& fsm, std::size_t nodes, Answer answer,
                         bool last_node_first = false) {
  run_outcome out;
  auto now = t0;
  auto next = fsm.start(now);
  while (next.what != kind::complete && out.attempts.size() < 10000) {
    switch (next.what) {
      case kind::send_attempt: {
        out.attempts.push_back(now);
        now += 1ms;
        const auto attempt = fsm.attempt();
        acquire_fsm::action decided;
        for (std::size_t k = 0; k < nodes && decided.what == kind::none; ++k) {
          const std::size_t i = last_node_first ? (k + nodes - 1) % nodes : k;
          decided = fsm.on_vote(attempt, i, answer(attempt, i), now);
        }
        if (decided.what == kind::none) decided = fsm.on_timer(next.timer_id, next.at);
        next = decided;
        break;
      }
      case kind::undo:
        now += 1ms;
        next = fsm.on_undone(now);
        break;
      case kind::pause:
        now = std::max(now, next.at);
        next = fsm.on_timer(next.timer_id, now);
        break;
      default:
        FAIL("the machine asked for nothing while running");
    }
  }
  out.done = next;
  out.at = now;
  return out;
}

/// The default retry policy, without jitter.
acquire_rules default_retry() {
  auto r = rules();
  r.retry = retry_policy{};
  r.retry.jitter = 0.0;
  return r;
}

}  // namespace

// Issue 20: wait_timeout = 5 s with the default policy gave up after three
// attempts (184 ms).
TEST_CASE("acquire_fsm: a set wait is the limit unless max_attempts is set",
          "[unit][acquire_fsm][wait]") {
  const auto held = [](std::uint64_t, std::size_t) { return refused; };
  SECTION("wait set, max_attempts unset: attempts until the wait ends") {
    auto r = default_retry();
    r.wait_timeout = 5s;
    acquire_fsm fsm(3, r, &half);
    const auto run = run_attempts(fsm, 3, held);
    CHECK(run.done.error == errc::not_acquired);
    CHECK(run.at >= t0 + 5s);
    CHECK(run.at < t0 + 5s + 10ms);
    CHECK(run.attempts.size() > 40);  // one every ~100 ms
  }
  SECTION("no wait, max_attempts unset: retry_policy::default_max_attempts") {
    acquire_fsm fsm(3, default_retry(), &half);
    const auto run = run_attempts(fsm, 3, held);
    CHECK(run.done.error == errc::not_acquired);
    CHECK(run.attempts.size() == retry_policy::default_max_attempts);
  }
  SECTION("wait set and max_attempts set: the attempts are the limit") {
    auto r = default_retry();
    r.wait_timeout = 5s;
    r.retry.max_attempts = 2;
    acquire_fsm fsm(3, r, &half);
    const auto run = run_attempts(fsm, 3, held);
    CHECK(run.done.error == errc::not_acquired);
    CHECK(run.attempts.size() == 2);
    CHECK(run.at < t0 + 1s);
  }
}

TEST_CASE("acquire_fsm: no quorum answering for unreachable_timeout ends the acquire",
          "[unit][acquire_fsm][unreachable]") {
  auto r = rules(0);  // no limit on attempts, no wait
  r.unreachable_timeout = 1s;
  const auto down = [](std::uint64_t, std::size_t) { return failed(errc::node_unavailable); };
  SECTION("every node down: quorum_unreachable at the bound, the last attempt no later") {
    acquire_fsm fsm(3, r, &half);
    const auto run = run_attempts(fsm, 3, down);
    CHECK(run.done.error == errc::quorum_unreachable);
    CHECK(run.attempts.back() <= t0 + 1s);
    CHECK(run.at >= t0 + 1s);
    CHECK(run.at <= t0 + 1s + 10ms);
  }
  SECTION("an attempt a quorum answered starts the bound over") {
    // Attempt 5 (at ~400 ms) is refused by two nodes, the third down.
    acquire_fsm fsm(3, r, &half);
    const auto run = run_attempts(fsm, 3, [](std::uint64_t attempt, std::size_t node) {
      return attempt == 5 && node < 2 ? refused : failed(errc::node_unavailable);
    });
    CHECK(run.done.error == errc::quorum_unreachable);
    REQUIRE(run.attempts.size() > 5);
    const auto answered_at = run.attempts[4] + 1ms;
    CHECK(run.at >= answered_at + 1s);
    CHECK(run.at <= answered_at + 1s + 10ms);
  }
  SECTION("held elsewhere is waited for past the bound") {
    auto waits = r;
    waits.wait_timeout = 3s;
    acquire_fsm fsm(3, waits, &half);
    const auto run = run_attempts(fsm, 3, [](std::uint64_t, std::size_t) { return refused; });
    CHECK(run.done.error == errc::not_acquired);
    CHECK(run.at >= t0 + 3s);
  }
  SECTION("held elsewhere with one node down is waited for past the bound") {
    // Review: a down node fails at once, so its failure and one refusal
    // decide each attempt before a quorum has answered; that is no sign the
    // nodes cannot answer.
    auto waits = r;
    waits.wait_timeout = 5s;
    acquire_fsm fsm(3, waits, &half);
    const auto run = run_attempts(
        fsm, 3,
        [](std::uint64_t, std::size_t node) {
          return node == 2 ? failed(errc::node_unavailable) : refused;
        },
        true);
    CHECK(run.done.error == errc::not_acquired);
    CHECK(run.at >= t0 + 5s);
  }
  SECTION("without a bound, attempts go on") {
    acquire_fsm fsm(3, rules(0), &half);
    const auto run = run_attempts(fsm, 3, down);
    CHECK(run.attempts.size() == 10000);
  }
}

TEST_CASE("acquire_fsm: failures that waiting cannot heal end the acquire at once",
          "[unit][acquire_fsm][unreachable]") {
  const redlock::error_code untrusted(X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN,
                                      redlock::tls_verify_category());
  const auto on_nodes = [](std::vector<vote> votes) {
    return [votes](std::uint64_t, std::size_t node) { return votes.at(node); };
  };
  const vote auth = failed(errc::authentication_failed);
  const vote down = failed(errc::node_unavailable);
  const vote bad_cert{vote::kind::failed, untrusted};
  // No limit on attempts, no wait, no unreachable bound: only the kind of
  // failure can end it.
  SECTION("credentials refused everywhere") {
    acquire_fsm fsm(3, rules(0), &half);
    const auto run = run_attempts(fsm, 3, on_nodes({auth, auth, auth}));
    CHECK(run.done.error == errc::authentication_failed);
    CHECK(run.attempts.size() == 1);
  }
  SECTION("certificates that do not verify on a majority") {
    acquire_fsm fsm(3, rules(0), &half);
    const auto run = run_attempts(fsm, 3, on_nodes({bad_cert, granted, bad_cert}));
    CHECK(run.done.error == untrusted);
    CHECK(run.attempts.size() == 1);
  }
  SECTION("a refused topology on a majority") {
    acquire_fsm fsm(3, rules(0), &half);
    const auto run = run_attempts(
        fsm, 3, on_nodes({failed(errc::replica_node), failed(errc::cluster_node), granted}));
    CHECK(run.done.what == kind::complete);
    CHECK(run.attempts.size() == 1);
  }
  SECTION("lasting failures the quorum can spare, the rest down: retried") {
    acquire_fsm fsm(5, rules(4), &half);
    const auto run = run_attempts(fsm, 5, on_nodes({auth, bad_cert, down, granted, granted}));
    CHECK(run.done.error == errc::quorum_unreachable);
    CHECK(run.attempts.size() == 4);
  }
}

}  // namespace acquire_fsm_test

namespace acquire_fsm_test {

// A lock of this client holds the key: its release is handed to the line
// at once, so a waiter's retry would only be refused by the nodes.
TEST_CASE("acquire_fsm: a waiter's retry against a lock of its own client is refused here",
          "[unit][acquire_fsm][held_here]") {
  const auto holder_until = t0 + 5s;
  SECTION("no attempt is sent, the attempt counts, and the pause goes on listening") {
    acquire_fsm fsm(3, rules(4), &half);
    fsm.start(t0);
    fsm.on_vote(1, 0, refused, t0 + 1ms);
    const auto pause = fsm.on_vote(1, 1, refused, t0 + 1ms);
    REQUIRE(pause.what == kind::undo);  // node 2 had not answered
    const auto waiting = fsm.on_undone(t0 + 2ms);
    REQUIRE(waiting.what == kind::pause);
    REQUIRE(waiting.wait_for_release);
    const auto next = fsm.on_timer(waiting.timer_id, t0 + 102ms, holder_until);
    CHECK(next.what == kind::pause);
    CHECK(next.wait_for_release);
    CHECK(next.at == t0 + 202ms);  // the policy's delay, as after a refusal
    CHECK(fsm.attempt() == 2);
    CHECK(fsm.current() == phase::pausing);
    SECTION("its release, handed over, starts an attempt at once") {
      CHECK(fsm.on_release_seen(true, t0 + 150ms).what == kind::send_attempt);
      CHECK(fsm.attempt() == 3);
    }
    SECTION("the attempts run out as if the nodes had refused them") {
      const auto third = fsm.on_timer(next.timer_id, t0 + 202ms, holder_until);
      REQUIRE(third.what == kind::pause);
      const auto over = fsm.on_timer(third.timer_id, t0 + 302ms, holder_until);
      CHECK(over.what == kind::complete);
      CHECK(over.error == errc::not_acquired);
      CHECK(fsm.attempt() == 4);
    }
    SECTION("once the holder's lock has ended, the retry asks the nodes") {
      CHECK(fsm.on_timer(next.timer_id, holder_until + 1ms, holder_until).what ==
            kind::send_attempt);
    }
  }
  SECTION("a pause that does not wait for releases retries as always") {
    acquire_fsm fsm(3, rules(4), &half);
    const auto a = fsm.start(t0);
    fsm.on_timer(a.timer_id, t0 + 500ms);  // nobody answered: undo
    const auto pause = fsm.on_undone(t0 + 501ms);
    REQUIRE(pause.what == kind::pause);
    REQUIRE_FALSE(pause.wait_for_release);
    CHECK(fsm.on_timer(pause.timer_id, t0 + 601ms, holder_until).what == kind::send_attempt);
  }
  SECTION("the wait deadline still ends the wait") {
    auto r = rules(0);
    r.wait_timeout = 250ms;
    acquire_fsm fsm(1, r, &half);
    fsm.start(t0);
    auto next = fsm.on_vote(1, 0, refused, t0 + 1ms);
    while (next.what == kind::pause) next = fsm.on_timer(next.timer_id, next.at, holder_until);
    CHECK(next.what == kind::complete);
    CHECK(next.error == errc::not_acquired);
    CHECK(fsm.attempt() == 3);  // refused at 1 ms, here at 101 and 201 ms
  }
  SECTION("refusals here are no answer: the unreachable bound still asks the nodes") {
    // Review: the bound kept moving with each refusal here, so a waiter
    // whose nodes had all gone never found out while the lock lasted.
    auto r = rules(0);
    r.wait_timeout = 3s;
    r.unreachable_timeout = 250ms;
    acquire_fsm fsm(1, r, &half);
    fsm.start(t0);
    const auto first = fsm.on_vote(1, 0, refused, t0 + 1ms);  // bound: 251 ms
    REQUIRE(first.what == kind::pause);
    const auto second = fsm.on_timer(first.timer_id, t0 + 101ms, holder_until);
    REQUIRE(second.what == kind::pause);
    const auto third = fsm.on_timer(second.timer_id, t0 + 201ms, holder_until);
    REQUIRE(third.what == kind::pause);
    CHECK(third.at == t0 + 251ms);  // the retry after it would be past the bound
    CHECK(fsm.on_timer(third.timer_id, t0 + 251ms, holder_until).what == kind::send_attempt);
    CHECK(fsm.attempt() == 4);
  }
}

}  // namespace acquire_fsm_test
