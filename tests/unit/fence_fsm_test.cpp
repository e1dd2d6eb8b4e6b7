// Fenced acquires (docs/fencing.md) in acquire_fsm, and the recovery rules of
// a node that lost its fencing state: fake clock, simulated votes.
#include "detail/acquire_fsm.hpp"
#include "detail/fence_recovery.hpp"
#include "detail/vote.hpp"
#include "machine_printing.hpp"

#include <boost/asio/error.hpp>
#include <catch2/catch.hpp>

#include <vector>

namespace fence_fsm_test {

using namespace std::chrono_literals;
using redlock::errc;
using redlock::retry_policy;
using redlock::detail::acquire_fsm;
using redlock::detail::acquire_rules;
using redlock::detail::fence_reading;
using redlock::detail::loss_watch;
using redlock::detail::undo_role;
using redlock::detail::vote;
using kind = acquire_fsm::action::kind;
using fences = std::vector<std::uint64_t>;

namespace {

const redlock::clock::time_point t0{std::chrono::seconds(1000)};
double half() { return 0.5; }
const vote granted{vote::kind::granted, {}};
const vote refused{vote::kind::refused, {}};
vote lost() { return {vote::kind::failed, make_error_code(errc::fence_state_lost)}; }

acquire_rules fenced_rules(unsigned attempts = 1) {
  acquire_rules r;
  r.round.ttl = 10s;
  r.round.drift_factor = 0.01;
  r.request_timeout = 500ms;
  r.retry = retry_policy::fixed(100ms, attempts, 0.0);
  r.fenced = true;
  return r;
}

}  // namespace

TEST_CASE("fenced acquire: agreeing counters complete in one round trip",
          "[unit][fencing][acquire_fsm]") {
  acquire_fsm fsm(3, fenced_rules(), &half);
  REQUIRE(fsm.start(t0).what == kind::send_attempt);
  CHECK(fsm.on_vote(1, 0, granted, fences{7, 3}, t0 + 1ms).what == kind::none);
  const auto done = fsm.on_vote(1, 2, granted, fences{7, 3}, t0 + 2ms);
  CHECK(done.what == kind::complete);
  CHECK_FALSE(done.error);
  CHECK(fsm.fences() == fences{7, 3});
  // A later, larger counter is not part of the decision.
  CHECK(fsm.on_vote(1, 1, granted, fences{9, 9}, t0 + 3ms).what == kind::none);
  CHECK(fsm.fences() == fences{7, 3});
}

TEST_CASE("fenced acquire: differing counters are written back before completing",
          "[unit][fencing][acquire_fsm]") {
  acquire_fsm fsm(5, fenced_rules(), &half);
  fsm.start(t0);
  fsm.on_vote(1, 0, granted, fences{4}, t0 + 1ms);
  CHECK(fsm.on_vote(1, 1, refused, fences{}, t0 + 1ms).what == kind::none);
  fsm.on_vote(1, 2, granted, fences{6}, t0 + 1ms);
  const auto write = fsm.on_vote(1, 3, granted, fences{5}, t0 + 2ms);
  REQUIRE(write.what == kind::write_back);
  CHECK(write.at == t0 + 2ms + 500ms);
  CHECK(fsm.fences() == fences{6});
  // Answers to the acquire no longer count; nor do write-back answers of
  // another attempt.
  CHECK(fsm.on_vote(1, 4, granted, fences{9}, t0 + 3ms).what == kind::none);
  CHECK(fsm.fences() == fences{6});
  CHECK(fsm.on_written(2, 0, granted, t0 + 3ms).what == kind::none);
  CHECK(fsm.on_written(1, 0, granted, t0 + 3ms).what == kind::none);
  CHECK(fsm.on_written(1, 1, lost(), t0 + 3ms).what == kind::none);
  CHECK(fsm.on_written(1, 2, granted, t0 + 3ms).what == kind::none);
  const auto done = fsm.on_written(1, 3, granted, t0 + 4ms);
  CHECK(done.what == kind::complete);
  CHECK_FALSE(done.error);
  CHECK(fsm.fences() == fences{6});
  // The validity still counts from the attempt's start.
  CHECK(fsm.round().validity_deadline() == t0 + 10s - 102ms);
}

TEST_CASE("fenced acquire: a write-back short of a majority undoes the attempt",
          "[unit][fencing][acquire_fsm]") {
  acquire_fsm fsm(3, fenced_rules(), &half);
  fsm.start(t0);
  fsm.on_vote(1, 0, granted, fences{1}, t0);
  const auto write = fsm.on_vote(1, 1, granted, fences{2}, t0);
  REQUIRE(write.what == kind::write_back);
  fsm.on_written(1, 0, granted, t0 + 1ms);
  CHECK(fsm.on_written(1, 1, lost(), t0 + 1ms).what == kind::none);
  const auto undo = fsm.on_written(1, 2, lost(), t0 + 2ms);
  REQUIRE(undo.what == kind::undo);
  CHECK(undo.undo == std::vector<undo_role>{undo_role::send_and_await, undo_role::send_and_await,
                                            undo_role::send});
  const auto done = fsm.on_undone(t0 + 3ms);
  CHECK(done.what == kind::complete);
  CHECK(done.error == errc::quorum_unreachable);
}

TEST_CASE("fenced acquire: the write-back's timer ends it, a late acknowledgement does not count",
          "[unit][fencing][acquire_fsm]") {
  acquire_fsm fsm(3, fenced_rules(2), &half);
  fsm.start(t0);
  fsm.on_vote(1, 0, granted, fences{1}, t0);
  const auto write = fsm.on_vote(1, 1, granted, fences{3}, t0);
  REQUIRE(write.what == kind::write_back);
  fsm.on_written(1, 0, granted, t0 + 1ms);
  const auto undo = fsm.on_timer(write.timer_id, write.at);
  REQUIRE(undo.what == kind::undo);
  CHECK(fsm.on_written(1, 1, granted, write.at + 1ms).what == kind::none);
  const auto pause = fsm.on_undone(write.at + 2ms);
  REQUIRE(pause.what == kind::pause);
  // The next attempt decides its fences afresh.
  const auto again = fsm.on_timer(pause.timer_id, pause.at);
  REQUIRE(again.what == kind::send_attempt);
  fsm.on_vote(2, 0, granted, fences{5}, pause.at);
  const auto done = fsm.on_vote(2, 2, granted, fences{5}, pause.at + 1ms);
  CHECK(done.what == kind::complete);
  CHECK(fsm.fences() == fences{5});
}

TEST_CASE("fenced acquire: acknowledgements after the validity ended fail the attempt",
          "[unit][fencing][acquire_fsm]") {
  auto r = fenced_rules();
  r.request_timeout = 20s;  // so that only the validity can end it
  acquire_fsm fsm(3, r, &half);
  fsm.start(t0);
  fsm.on_vote(1, 0, granted, fences{1}, t0);
  REQUIRE(fsm.on_vote(1, 1, granted, fences{2}, t0).what == kind::write_back);
  fsm.on_written(1, 0, granted, t0 + 1ms);
  const auto undo = fsm.on_written(1, 1, granted, t0 + 10s);
  REQUIRE(undo.what == kind::undo);
  CHECK(fsm.on_undone(t0 + 10s).error == errc::validity_expired);
}

TEST_CASE("fenced acquire: a cancel during the write-back undoes the attempt",
          "[unit][fencing][acquire_fsm]") {
  acquire_fsm fsm(3, fenced_rules(), &half);
  fsm.start(t0);
  fsm.on_vote(1, 0, granted, fences{1}, t0);
  REQUIRE(fsm.on_vote(1, 1, granted, fences{2}, t0).what == kind::write_back);
  REQUIRE(fsm.on_cancel(t0 + 1ms).what == kind::undo);
  CHECK(fsm.on_undone(t0 + 2ms).error == boost::asio::error::operation_aborted);
}

TEST_CASE("fenced acquire: a node whose state is lost is a failed vote",
          "[unit][fencing][acquire_fsm]") {
  acquire_fsm fsm(3, fenced_rules(), &half);
  fsm.start(t0);
  fsm.on_vote(1, 0, lost(), fences{}, t0);
  fsm.on_vote(1, 1, granted, fences{8}, t0);
  const auto done = fsm.on_vote(1, 2, granted, fences{8}, t0);
  CHECK(done.what == kind::complete);
  CHECK(fsm.fences() == fences{8});
  CHECK(fsm.round().outcomes()[0].error == errc::fence_state_lost);
}

TEST_CASE("fence votes: the scripts' answers", "[unit][fencing]") {
  using redlock::detail::reply;
  reply ok{reply::kind::string, 0, "ok 12 3"};
  auto v = redlock::detail::fenced_acquire_vote({}, ok, 2);
  CHECK(v.decision.what == vote::kind::granted);
  CHECK(v.fences == fences{12, 3});
  // One fence too few, zero, or junk: a protocol error, never a grant.
  for (std::string_view bad : {"ok 12", "ok 0", "ok 1 x", "ok", "ok 1 2 "}) {
    reply r{reply::kind::string, 0, bad};
    auto b = redlock::detail::fenced_acquire_vote({}, r, 2);
    CHECK(b.decision.what == vote::kind::failed);
    CHECK(b.decision.error == errc::protocol_error);
  }
  reply held{reply::kind::nil, 0, {}};
  CHECK(redlock::detail::fenced_acquire_vote({}, held, 1).decision.what == vote::kind::refused);
  reply gone{reply::kind::string, 0, "lost abc"};
  auto l = redlock::detail::fenced_acquire_vote({}, gone, 1);
  CHECK(l.decision.error == errc::fence_state_lost);
  CHECK(l.loss_id == "abc");
  CHECK(redlock::detail::write_back_vote({}, gone).loss_id == "abc");
  reply one{reply::kind::integer, 1, {}};
  CHECK(redlock::detail::write_back_vote({}, one).decision.what == vote::kind::granted);
}

TEST_CASE("fence recovery: re-seeding needs every other node, or a quorum of valid ones",
          "[unit][fencing]") {
  using redlock::detail::reseed_floor;
  const fence_reading valid5{true, true, 5, ""};
  const fence_reading valid9{true, true, 9, ""};
  const fence_reading lost3{true, false, 3, "x"};
  const fence_reading empty{true, false, 0, "y"};
  const fence_reading silent{};
  // Five nodes: every other one answered (lost ones count: a minority at
  // most has lost its state), or a quorum (3) of the four is valid.
  CHECK(reseed_floor(std::vector{valid5, lost3, lost3, valid5}, 5) == 5U);
  CHECK(reseed_floor(std::vector{valid5, valid9, silent, valid5}, 5) == 9U);
  CHECK(reseed_floor(std::vector{valid5, valid9, lost3, silent}, 5) == std::nullopt);
  // Three nodes.
  CHECK(reseed_floor(std::vector{valid5, valid9}, 3) == 9U);
  CHECK(reseed_floor(std::vector{valid5, lost3}, 3) == 5U);
  CHECK(reseed_floor(std::vector{valid5, silent}, 3) == std::nullopt);
  // Nodes that never had state: each starts from what the others have.
  CHECK(reseed_floor(std::vector{empty, empty}, 3) == 0U);
  CHECK(reseed_floor(std::vector{fence_reading{true, true, 1, ""}, empty}, 3) == 1U);
  CHECK(reseed_floor(std::vector{empty, silent}, 3) == std::nullopt);
}

TEST_CASE("fence recovery: a floor from lost nodes' answers is confirmed by reading them again",
          "[unit][fencing]") {
  using redlock::detail::needs_confirmation;
  using redlock::detail::still_lost;
  const fence_reading valid5{true, true, 5, ""};
  const fence_reading lost_a{true, false, 3, "a"};
  const fence_reading lost_b{true, false, 0, "b"};
  const fence_reading no_state{true, false, 0, ""};
  // A quorum of valid others needs nothing more.
  CHECK_FALSE(needs_confirmation(std::vector{valid5, valid5, valid5, lost_a}, 5));
  CHECK_FALSE(needs_confirmation(std::vector{valid5, valid5}, 3));
  // Every other node's answer, some not valid: read those again.
  CHECK(needs_confirmation(std::vector{valid5, valid5, lost_a, lost_b}, 5));
  CHECK(needs_confirmation(std::vector{valid5, lost_a}, 3));
  // Still lost by the same loss: yes. Re-seeded meanwhile, lost again
  // (another id), no answer, or no loss recorded to compare: no.
  CHECK(still_lost(lost_a, lost_a));
  CHECK_FALSE(still_lost(lost_a, valid5));
  CHECK_FALSE(still_lost(lost_a, fence_reading{true, false, 0, "c"}));
  CHECK_FALSE(still_lost(lost_a, fence_reading{}));
  CHECK_FALSE(still_lost(no_state, no_state));
}

TEST_CASE("fence recovery: the wait counts from the first sight of each loss", "[unit][fencing]") {
  loss_watch watch(3, 2s);
  CHECK_FALSE(watch.seen(1, "a", t0));
  CHECK_FALSE(watch.seen(1, "a", t0 + 1999ms));
  CHECK(watch.seen(1, "a", t0 + 2s));
  CHECK_FALSE(watch.seen(1, "a", t0 + 3s));  // one re-seed at a time
  watch.ended(1, "a");
  CHECK(watch.seen(1, "a", t0 + 3s));
  // Another loss of the same node starts its own wait.
  CHECK_FALSE(watch.seen(1, "b", t0 + 4s));
  watch.ended(1, "a");  // the old re-seed's end changes nothing
  CHECK_FALSE(watch.seen(1, "b", t0 + 5s));
  CHECK(watch.seen(1, "b", t0 + 6s));
  CHECK_FALSE(watch.seen(0, "b", t0 + 6s));
  CHECK(redlock::detail::reseed_wait(10s, 0.01, 500ms) == 10s + 102ms + 500ms);
  CHECK(redlock::detail::parse_fence_reading("1 42 -")->max == 42U);
  CHECK(redlock::detail::parse_fence_reading("1 42 -")->loss_id.empty());
  CHECK(redlock::detail::parse_fence_reading("0 7 ab")->loss_id == "ab");
  for (std::string_view bad : {"1 42", "1 x -", "2 1 -", "1 42 ", "1 4x -"}) {
    CHECK_FALSE(redlock::detail::parse_fence_reading(bad));
  }
}

// Review finding (review21): client_config::max_fenced_ttl is not
// validated, and the wait converts it to the clock's nanoseconds: one too
// large for them (milliseconds::max() as "no limit", or 1000 years) wraps
// to a negative wait, so a lost node is re-seeded at once (the "nowait"
// counterexample). No fenced TTL exceeds max_duration (validate refuses
// longer TTLs), so waiting that out is always enough.
TEST_CASE("fence recovery: a huge max_fenced_ttl still waits out every fenced TTL (review)",
          "[unit][fencing]") {
  using std::chrono::milliseconds;
  for (auto longest : {milliseconds::max(), milliseconds(std::chrono::hours(24 * 365 * 1000))}) {
    INFO(longest.count());
    CHECK(redlock::detail::reseed_wait(longest, 0.01, 500ms) >= redlock::max_duration);
  }
}

}  // namespace fence_fsm_test
