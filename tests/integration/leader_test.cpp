// Leader election among contenders with clients of their own.
#include "test_env.hpp"

#include <redlock/leader.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <array>
#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <thread>

using namespace redlock::itest;
using redlock::errc;
using redlock::error_code;

namespace {

/// A contender and what happened to it, in the order it happened.
struct contender {
  contender(env& e, const redlock::client_config& config, milliseconds ttl)
      : locks(e.io.get_executor(), config) {
    redlock::campaign_options options;
    options.lock = once(ttl);
    election.emplace(
        locks, "leader", options,
        [this](const redlock::lock&, redlock::lease_token term) {
          elected_at = redlock::clock::now();
          this->term = term;
          ++elected;
        },
        [this](error_code reason) {
          lost_at = redlock::clock::now();
          lost_reason = reason;
        });
  }

  redlock::client locks;
  std::optional<redlock::leader_election> election;
  int elected = 0;
  redlock::clock::time_point elected_at{}, lost_at{};
  std::optional<error_code> lost_reason;
  redlock::lease_token term;
};

int leaders(const std::array<std::unique_ptr<contender>, 3>& all) {
  int n = 0;
  for (const auto& c : all) n += c->election->leading() ? 1 : 0;
  return n;
}

std::optional<error_code> step_down(env& e, contender& c) {
  auto [ec] = run_op<error_code>(
      e.io, [&](auto handler) { c.election->async_step_down(std::move(handler)); });
  return ec;
}

}  // namespace

TEST_CASE("leader election: one leader at a time, and a step-down hands over at once",
          "[integration][leader]") {
  env e;
  std::array<std::unique_ptr<contender>, 3> all;
  for (auto& c : all) c = std::make_unique<contender>(e, e.config, 3s);
  for (auto& c : all) c->election->campaign();
  REQUIRE(poll_until(
      e.io, [&] { return leaders(all) == 1; }, 5s));
  // It stays one for longer than the TTL: leadership is kept by extension.
  const auto watch_until = steady::now() + 4s;
  while (steady::now() < watch_until) {
    wait_on_timer(e.io, 50ms);
    REQUIRE(leaders(all) == 1);
  }
  contender* first = nullptr;
  for (auto& c : all) {
    if (c->election->leading()) first = c.get();
  }
  REQUIRE(first != nullptr);
  CHECK(first->elected == 1);
  CHECK_FALSE(first->term.stop_requested());

  // Stepping down: the term ends, and a follower leads well before the TTL
  // would have let it (woken by the release).
  const auto handed_at = steady::now();
  CHECK_FALSE(*step_down(e, *first));
  CHECK(first->term.stop_requested());
  CHECK_FALSE(first->lost_reason.has_value());  // on_lost is for losses, not step-downs
  CHECK_FALSE(first->election->leading());
  REQUIRE(poll_until(
      e.io, [&] { return leaders(all) == 1; }, 5s));
  CHECK(steady::now() - handed_at < 1s);
  CHECK_FALSE(first->election->leading());

  for (auto& c : all) CHECK_FALSE(*step_down(e, *c));
  CHECK(leaders(all) == 0);
  CHECK(e.key_nowhere(e.key("leader")));
}

TEST_CASE(
    "leader election: a leader cut off from the nodes learns it before its term ends, and "
    "a follower takes over only after",
    "[integration][leader]") {
  env e;
  // Contender 0 reaches every node through a proxy of its own.
  auto cut_off_config = e.config;
  std::vector<std::unique_ptr<redlock::test::fault_proxy>> proxies;
  for (std::size_t i = 0; i < e.nodes.size(); ++i) {
    proxies.push_back(std::make_unique<redlock::test::fault_proxy>(e.nodes.node(i).port()));
    cut_off_config.nodes[i].port = proxies.back()->port();
  }
  std::array<std::unique_ptr<contender>, 3> all;
  all[0] = std::make_unique<contender>(e, cut_off_config, 1s);
  all[0]->election->campaign();
  REQUIRE(poll_until(
      e.io, [&] { return all[0]->election->leading(); }, 5s));
  for (std::size_t i = 1; i < 3; ++i) {
    all[i] = std::make_unique<contender>(e, e.config, 1s);
    all[i]->election->campaign();
  }
  wait_on_timer(e.io, 300ms);
  CHECK(leaders(all) == 1);

  // The leader pauses, as far as the nodes can tell.
  for (auto& p : proxies) p->partition(redlock::test::fault_proxy::partition_mode::blackhole);
  REQUIRE(poll_until(
      e.io, [&] { return all[0]->lost_reason.has_value(); }, 5s));
  CHECK(*all[0]->lost_reason == errc::lock_expiring);
  CHECK(all[0]->term.stop_requested());
  REQUIRE(poll_until(
      e.io, [&] { return leaders(all) == 1; }, 5s));
  contender* next = all[1]->election->leading() ? all[1].get() : all[2].get();
  // The follower was elected after the old leader had stopped.
  CHECK(next->elected_at > all[0]->lost_at);
  for (auto& p : proxies) p->partition(redlock::test::fault_proxy::partition_mode::none);
  for (auto& c : all) CHECK_FALSE(*step_down(e, *c));
}

TEST_CASE("leader election: stepping down while campaigning leaves nothing behind",
          "[integration][leader]") {
  env e;
  redlock::client holder(e.io.get_executor(), e.config);
  auto held = acquire(e.io, holder, "leader", once(5s));
  REQUIRE_FALSE(held.ec);
  // On every node, so that the campaign is refused everywhere.
  REQUIRE(e.key_everywhere(e.key("leader"), held.held.token()));
  contender c(e, e.config, 5s);
  c.election->campaign();
  REQUIRE(e.someone_waits_for(e.key("leader")));
  CHECK_FALSE(*step_down(e, c));
  CHECK(c.elected == 0);
  CHECK(e.release_everywhere(holder, held.held).removed >= 3);
  // Nobody campaigns any more: the key stays free.
  wait_on_timer(e.io, 300ms);
  for (auto& a : e.admin) CHECK_FALSE(a->exists(e.key("leader")));
}

TEST_CASE("leader election refuses bad options", "[integration][leader]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  auto make = [&](std::string resource, redlock::campaign_options options) {
    return code_of([&] {
      redlock::leader_election election(locks, std::move(resource), options, nullptr, nullptr);
    });
  };
  CHECK(make("", {}) == errc::empty_resource);
  redlock::campaign_options bad_keep;
  bad_keep.keep.extend_at = 0;
  CHECK(make("x", bad_keep) == errc::invalid_keep_options);
  redlock::campaign_options bad_ttl;
  bad_ttl.lock.ttl = milliseconds{0};
  CHECK(make("x", bad_ttl) == errc::invalid_ttl);
}

namespace {
struct watcher {
  std::atomic<int> elected{0};
  std::atomic<int> lost{0};
  std::atomic<long long> elected_ms{0}, stopped_ms{0};
  std::optional<std::stop_callback<std::function<void()>>> on_stop;
};
long long now_ms() {
  return std::chrono::duration_cast<milliseconds>(steady::now().time_since_epoch()).count();
}
std::unique_ptr<redlock::leader_election> make_election(redlock::client& c, watcher& w,
                                                        redlock::campaign_options options) {
  return std::make_unique<redlock::leader_election>(
      c, "leader", options,
      [&w](const redlock::lock&, std::stop_token term) {
        w.elected_ms = now_ms();
        ++w.elected;
        w.on_stop.emplace(term, std::function<void()>([&w] { w.stopped_ms = now_ms(); }));
      },
      [&w](error_code) { ++w.lost; });
}
}  // namespace

// Review: leading() stayed true past the validity while the strand was held up.
TEST_CASE("leader election: leading() turns false on time while the leader's executor is busy",
          "[integration][leader]") {
  env e;
  boost::asio::io_context io_a;
  auto work_a = boost::asio::make_work_guard(io_a);
  redlock::client locks_a(io_a.get_executor(), e.config);
  redlock::client locks_b(e.io.get_executor(), e.config);
  redlock::campaign_options options;
  options.lock = once(1s);
  watcher wa, wb;
  auto a = make_election(locks_a, wa, options);
  std::thread runner([&] { io_a.run(); });
  a->campaign();
  REQUIRE(poll_until(
      e.io, [&] { return a->leading(); }, 5s));
  auto b = make_election(locks_b, wb, options);
  b->campaign();
  wait_on_timer(e.io, 200ms);
  // Something else on A's io_context thread blocks it for 2.5 s.
  boost::asio::post(io_a, [] { std::this_thread::sleep_for(2500ms); });
  REQUIRE(poll_until(
      e.io, [&] { return b->leading(); }, 5s));
  INFO("A: leading=" << a->leading() << " on_lost calls=" << wa.lost.load());
  CHECK_FALSE((a->leading() && b->leading()));  // two leaders seen by leading()
  wait_on_timer(e.io, 2500ms);
  boost::asio::post(io_a, [&] { a.reset(); });
  b.reset();
  wait_on_timer(e.io, 300ms);
  work_a.reset();
  io_a.stop();
  runner.join();
}

// Review: the campaign released at once on the signal, so a follower was
// elected while the old term still had its lost_margin to stop.
TEST_CASE(
    "leader election: after the lost-lock signal the old term keeps its margin before a "
    "follower is elected",
    "[integration][leader]") {
  env e;
  redlock::client locks_a(e.io.get_executor(), e.config);
  redlock::client locks_b(e.io.get_executor(), e.config);
  redlock::campaign_options options;
  options.lock = once(1s);
  options.keep.max_extensions = 1;  // hold_limit_reached, lost_margin before validity end
  options.keep.lost_margin = 300ms;
  watcher wa, wb;
  auto a = make_election(locks_a, wa, options);
  a->campaign();
  REQUIRE(poll_until(
      e.io, [&] { return a->leading(); }, 5s));
  auto b = make_election(locks_b, wb, options);
  b->campaign();
  REQUIRE(poll_until(
      e.io, [&] { return wb.elected > 0; }, 5s));
  REQUIRE(wa.stopped_ms > 0);
  const auto gap = wb.elected_ms - wa.stopped_ms;
  INFO("B elected " << gap << " ms after A's term was stopped (lost_margin 300 ms)");
  // The keeper promises the lock holds for lost_margin after the signal.
  CHECK(gap >= 250);
  a.reset();
  b.reset();
}

// Issue 20 §5: the term's token is what docs/usage.md tells the work to
// check before each side effect; with the executor held up past the
// term's signal time (as after a process pause), it still said "go on"
// while leading() already said no.
TEST_CASE("the term's token stops on time even while the client's executor is held up",
          "[integration][leader]") {
  env e;
  contender c(e, e.config, 600ms);
  c.election->campaign();
  REQUIRE(poll_until(
      e.io, [&] { return c.elected == 1; }, 5s));
  REQUIRE_FALSE(c.term.stop_requested());
  std::atomic<bool> blocked{false};
  bool token_stopped = false;
  bool still_leading = true;
  boost::asio::post(e.io, [&] {
    blocked = true;
    // The work's own check, from the blocked executor's point of view as
    // from any thread: nothing has been delivered yet.
    const auto limit = steady::now() + 2s;
    while (!c.term.stop_requested() && steady::now() < limit) std::this_thread::sleep_for(1ms);
    token_stopped = c.term.stop_requested();
    still_leading = c.election->leading();
    CHECK_FALSE(c.term.get_stop_token().stop_requested());
  });
  run_until(e.io, [&] { return blocked.load(); });
  CHECK(token_stopped);
  CHECK_FALSE(still_leading);
  // Delivered once the executor runs again: on_lost, and the std token.
  run_until(
      e.io, [&] { return c.lost_reason.has_value(); }, 5s);
  CHECK(c.term.get_stop_token().stop_requested());
  CHECK(c.term.stop_requested());
  step_down(e, c);
}

namespace {

namespace asio = boost::asio;

/// What a coroutine that leads one term saw.
struct term_log {
  std::optional<redlock::leader_term> term;
  std::optional<error_code> ended;    ///< The term's end, once it came.
  std::optional<error_code> failure;  ///< What async_wait_elected threw.
};

/// Waits to be elected, then for the end of the term.
asio::awaitable<void> lead_once(redlock::leader_election& election, std::shared_ptr<term_log> log) {
  try {
    log->term = co_await election.async_wait_elected(asio::use_awaitable);
  } catch (const boost::system::system_error& failure) {
    log->failure = failure.code();
    co_return;
  }
  error_code why;
  co_await election.async_wait_term_end(*log->term, asio::redirect_error(asio::use_awaitable, why));
  log->ended = why;
}

}  // namespace

TEST_CASE("leader election in coroutines: co_await the term, and its end by a step-down",
          "[integration][leader][awaitable]") {
  env e;
  redlock::client first_locks(e.io.get_executor(), e.config);
  redlock::client second_locks(e.io.get_executor(), e.config);
  redlock::campaign_options options;
  options.lock = once(3s);
  redlock::leader_election first(first_locks, "leader", options);
  redlock::leader_election second(second_locks, "leader", options);

  auto first_log = std::make_shared<term_log>();
  asio::co_spawn(e.io, lead_once(first, first_log), asio::detached);
  first.campaign();
  run_until(
      e.io, [&] { return first_log->term.has_value(); }, op_limit, "the first election");
  const auto term = *first_log->term;
  CHECK(term.number == 1);
  CHECK(first.terms() == 1);
  CHECK(first.leading());
  CHECK(term.held.valid());
  CHECK(term.fence() == 0);  // not fenced
  CHECK_FALSE(term.token.stop_requested());
  REQUIRE(e.key_everywhere(e.key("leader"), term.held.token()));

  // A wait while leading gets the current term (never from inside the call).
  bool again = false;
  redlock::leader_term same;
  first.async_wait_elected([&](error_code ec, redlock::leader_term t) {
    CHECK_FALSE(ec);
    same = std::move(t);
    again = true;
  });
  CHECK_FALSE(again);
  run_until(e.io, [&] { return again; });
  CHECK(same.number == 1);
  CHECK(same.held.token() == term.held.token());

  // The follower's coroutine waits while the first leads.
  auto second_log = std::make_shared<term_log>();
  asio::co_spawn(e.io, lead_once(second, second_log), asio::detached);
  second.campaign();
  REQUIRE(e.someone_waits_for(e.key("leader")));
  CHECK_FALSE(second_log->term.has_value());
  CHECK_FALSE(first_log->ended.has_value());

  // Stepping down ends the term (operation_aborted: not a loss), and the
  // follower's co_await returns its term.
  auto stepped = first.async_step_down(asio::use_future);
  get_running(e.io, stepped);
  run_until(
      e.io, [&] { return first_log->ended.has_value(); }, op_limit, "the term's end");
  CHECK(*first_log->ended == asio::error::operation_aborted);
  CHECK(term.token.stop_requested());
  run_until(
      e.io, [&] { return second_log->term.has_value(); }, op_limit, "the second election");
  CHECK(second.leading());
  CHECK(second_log->term->number == 1);
  CHECK(second_log->term->held.token() != term.held.token());
  REQUIRE(e.key_everywhere(e.key("leader"), second_log->term->held.token()));

  // The first's campaign is over: a wait for a term ends at once.
  auto after = first.async_wait_elected(asio::use_future);
  CHECK(code_of([&] { get_running(e.io, after); }) == asio::error::operation_aborted);
  // A wait for the end of a term that ended is told how it ended.
  auto ended = first.async_wait_term_end(term, asio::use_future);
  CHECK(code_of([&] { get_running(e.io, ended); }) == asio::error::operation_aborted);

  auto done = second.async_step_down(asio::use_future);
  get_running(e.io, done);
  run_until(e.io, [&] { return second_log->ended.has_value(); });
  CHECK(*second_log->ended == asio::error::operation_aborted);
  CHECK(e.key_nowhere(e.key("leader")));
}

TEST_CASE(
    "leader election with futures and callbacks: a fenced term lost to a partition ends "
    "with its reason, and the next leader's fence is larger",
    "[integration][leader][awaitable]") {
  env e;
  // Fresh nodes seed their fencing state for max_fenced_ttl: keep it short.
  e.config.max_fenced_ttl = 1s;
  auto proxies = std::vector<std::unique_ptr<redlock::test::fault_proxy>>{};
  auto cut_off_config = e.config;
  for (std::size_t i = 0; i < e.nodes.size(); ++i) {
    proxies.push_back(std::make_unique<redlock::test::fault_proxy>(e.nodes.node(i).port()));
    cut_off_config.nodes[i].port = proxies.back()->port();
  }
  redlock::client cut_off_locks(e.io.get_executor(), cut_off_config);
  redlock::client follower_locks(e.io.get_executor(), e.config);
  redlock::campaign_options options;
  options.lock = once(1s);
  options.lock.fenced = true;
  redlock::leader_election cut_off(cut_off_locks, "leader", options);
  redlock::leader_election follower(follower_locks, "leader", options);

  // An empty term has no end to wait for.
  CHECK(code_of([&] { cut_off.async_wait_term_end(redlock::leader_term{}, [](error_code) {}); }) ==
        errc::not_a_lock);

  auto elected = cut_off.async_wait_elected(asio::use_future);
  cut_off.campaign();
  const auto term = get_running(e.io, elected);
  CHECK(term.number == 1);
  CHECK(term.held.fenced());
  CHECK(term.fence() > 0);
  CHECK(term.fence() == term.held.fence());

  auto next = follower.async_wait_elected(asio::use_future);
  follower.campaign();

  // The leader is cut off from every node: its term ends with the
  // lost-lock signal's reason, told to a callback.
  std::optional<error_code> reason;
  cut_off.async_wait_term_end(term, [&](error_code why) { reason = why; });
  for (auto& p : proxies) p->partition(redlock::test::fault_proxy::partition_mode::blackhole);
  run_until(
      e.io, [&] { return reason.has_value(); }, op_limit, "the term's end");
  CHECK(*reason == errc::lock_expiring);
  CHECK(term.token.stop_requested());
  CHECK_FALSE(cut_off.leading());

  // Asked again after the end: the same reason, not from inside the call.
  std::optional<error_code> told_again;
  cut_off.async_wait_term_end(term, [&](error_code why) { told_again = why; });
  CHECK_FALSE(told_again.has_value());
  run_until(e.io, [&] { return told_again.has_value(); });
  CHECK(*told_again == errc::lock_expiring);

  // The follower leads next, with a larger fence.
  const auto follower_term = get_running(e.io, next);
  CHECK(follower.leading());
  CHECK(follower_term.fence() > term.fence());

  for (auto& p : proxies) p->partition(redlock::test::fault_proxy::partition_mode::none);
  auto a = cut_off.async_step_down(asio::use_future);
  CHECK_NOTHROW(get_running(e.io, a));
  auto b = follower.async_step_down(asio::use_future);
  CHECK_NOTHROW(get_running(e.io, b));
}
