// The keep schedule's rounds: which due keepers run, how many extensions run
// at once, and the batch their extensions join. No sockets: the node pool is
// never started.
#include "detail/keep_schedule.hpp"

#include "detail/node_pool.hpp"

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

using namespace redlock::detail;
using namespace std::chrono_literals;
using redlock::clock;

namespace {

struct fake_keeper final : scheduled_keeper {
  std::function<void()> when_due;
  int runs = 0;
  void on_due(clock::time_point) override {
    ++runs;
    if (when_due) when_due();
  }
};

/// Runs what is ready, expired timers included.
void settle(boost::asio::io_context& io) {
  for (int i = 0; i < 3; ++i) {
    io.restart();
    io.poll();
  }
}

struct fixture {
  boost::asio::io_context io;
  strand_type strand = make_core_strand(io.get_executor());
  node_pool pool{strand, std::vector<redlock::node_config>(3),
                 [](std::size_t) { return connection_settings{}; }};
};

}  // namespace

/// A keeper as keep_op behaves: extends when there is room, else waits in
/// line (and for its signal time, far away here).
struct extending_keeper {
  fake_keeper keeper;
  bool extended = false;
};

void behave(keep_schedule& schedule, extending_keeper& k, std::vector<int>& order, int id) {
  k.keeper.when_due = [&schedule, &k, &order, id] {
    if (schedule.has_room()) {
      schedule.extension_started();
      k.extended = true;
      order.push_back(id);
      return;
    }
    schedule.schedule(k.keeper, clock::now() + 1h, clock::now() + 1h);
    schedule.wait_for_room(k.keeper);
  };
}

TEST_CASE("at most max_in_flight extensions run at once, the others wait in line, first come first",
          "[unit][keep_schedule]") {
  fixture f;
  keep_schedule schedule(f.strand, f.pool, 4);
  std::vector<extending_keeper> keepers(10);
  std::vector<int> order;
  const auto now = clock::now();
  for (int i = 0; i < 10; ++i) {
    behave(schedule, keepers[i], order, i);
    // Listed latest-first: the schedule orders them by their latest time.
    schedule.schedule(keepers[i].keeper, now - 1s, now - 1s + std::chrono::milliseconds(100 - i));
  }
  settle(f.io);
  CHECK(order == std::vector<int>{9, 8, 7, 6});
  CHECK(schedule.in_flight() == 4);
  CHECK(schedule.in_line() == 6);

  // More than half still running: the line waits.
  schedule.extension_ended();
  settle(f.io);
  CHECK(order.size() == 4);
  // Half done: the line moves, in its order.
  schedule.extension_ended();
  settle(f.io);
  CHECK(order == std::vector<int>{9, 8, 7, 6, 5, 4});
  CHECK(schedule.in_flight() == 4);
  for (int i = 0; i < 4; ++i) schedule.extension_ended();
  settle(f.io);
  CHECK(order.size() == 10);
  CHECK(schedule.in_line() == 0);
  CHECK(schedule.size() == 0);
  schedule.close();
}

// Review: the cap held back every wake-up, so a keeper whose only duty left
// was its lost-lock signal waited for other locks' extensions to end.
TEST_CASE("a keeper is woken at its latest time even while extensions fill the schedule",
          "[unit][keep_schedule]") {
  fixture f;
  keep_schedule schedule(f.strand, f.pool, 4);
  std::vector<fake_keeper> busy(4);
  for (auto& k : busy) {
    k.when_due = [&] { schedule.extension_started(); };  // stuck: never ends
    schedule.schedule(k, clock::now() - 1s, clock::now() - 1s);
  }
  settle(f.io);
  REQUIRE(schedule.in_flight() == 4);
  // Waiting for its signal time, 20 ms away; it will send nothing.
  fake_keeper signalling;
  schedule.schedule(signalling, clock::now() + 20ms, clock::now() + 20ms);
  // And one in line for room, whose signal time comes too.
  fake_keeper in_line;
  schedule.schedule(in_line, clock::now() + 20ms, clock::now() + 20ms);
  schedule.wait_for_room(in_line);
  f.io.restart();
  f.io.run_for(std::chrono::milliseconds(200));
  CHECK(signalling.runs == 1);
  CHECK(in_line.runs == 1);
  CHECK(schedule.in_line() == 0);
  schedule.close();
}

TEST_CASE("due keepers that send nothing do not stall the ones behind them",
          "[unit][keep_schedule]") {
  fixture f;
  keep_schedule schedule(f.strand, f.pool, 2);
  std::vector<fake_keeper> keepers(5);
  const auto now = clock::now();
  for (auto& k : keepers) schedule.schedule(k, now - 1s, now - 1s);
  settle(f.io);
  for (const auto& k : keepers) CHECK(k.runs == 1);
  CHECK(schedule.in_flight() == 0);
}

TEST_CASE("extensions of due keepers join one batch, open only while they run",
          "[unit][keep_schedule]") {
  fixture f;
  keep_schedule schedule(f.strand, f.pool);
  CHECK(schedule.open_batch() == nullptr);
  fake_keeper keeper;
  extension_batch* seen = nullptr;
  keeper.when_due = [&] { seen = schedule.open_batch(); };
  schedule.schedule(keeper, clock::now() - 1s, clock::now() - 1s);
  settle(f.io);
  CHECK(keeper.runs == 1);
  CHECK(seen != nullptr);
  CHECK(schedule.open_batch() == nullptr);
  schedule.close();
}

TEST_CASE("a closed schedule runs nobody, whatever ends", "[unit][keep_schedule]") {
  fixture f;
  keep_schedule schedule(f.strand, f.pool, 1);
  fake_keeper first;
  fake_keeper second;
  first.when_due = [&] { schedule.extension_started(); };
  schedule.schedule(first, clock::now() - 1s, clock::now() - 1s);
  settle(f.io);
  CHECK(first.runs == 1);
  schedule.schedule(second, clock::now() + 1h, clock::now() + 1h);
  schedule.wait_for_room(second);
  settle(f.io);
  CHECK(second.runs == 0);  // waits for room
  schedule.close();
  CHECK(schedule.in_line() == 0);
  schedule.extension_ended();
  settle(f.io);
  CHECK(second.runs == 0);
}

TEST_CASE("unschedule takes a keeper out of the line too", "[unit][keep_schedule]") {
  fixture f;
  keep_schedule schedule(f.strand, f.pool, 1);
  fake_keeper first;
  fake_keeper leaving;
  first.when_due = [&] { schedule.extension_started(); };
  schedule.schedule(first, clock::now() - 1s, clock::now() - 1s);
  settle(f.io);
  schedule.schedule(leaving, clock::now() + 1h, clock::now() + 1h);
  schedule.wait_for_room(leaving);
  CHECK(schedule.in_line() == 1);
  schedule.unschedule(leaving);
  CHECK(schedule.in_line() == 0);
  CHECK(schedule.size() == 0);
  schedule.extension_ended();
  settle(f.io);
  CHECK(leaving.runs == 0);
  schedule.close();
}

TEST_CASE("the in-flight limit grows with the nodes' shortest round trip, within bounds",
          "[unit][keep_schedule]") {
  using redlock::detail::in_flight_limit;
  CHECK(in_flight_limit(1024, 0ms) == 1024);  // nothing measured yet
  CHECK(in_flight_limit(1024, 1ms) == 1024);
  CHECK(in_flight_limit(1024, 10ms) == 1024);
  CHECK(in_flight_limit(1024, 11ms) == 2048);
  CHECK(in_flight_limit(1024, 300ms) == 30 * 1024);
  CHECK(in_flight_limit(1024, 10s) == 32 * 1024);
}

TEST_CASE("the shortest round trip is that of the current window or the one before",
          "[unit][keep_schedule]") {
  using redlock::detail::shortest_round_trip;
  shortest_round_trip trips;
  CHECK(trips.estimate() == clock::duration::zero());
  const auto t0 = clock::now();
  trips.observe(300ms, t0);
  trips.observe(320ms, t0 + 1s);
  CHECK(trips.estimate() == 300ms);
  // Queueing makes some round trips longer: the least one counts.
  trips.observe(900ms, t0 + 2s);
  CHECK(trips.estimate() == 300ms);
  // A route that got shorter is taken up at once...
  trips.observe(2ms, t0 + 3s);
  CHECK(trips.estimate() == 2ms);
  // ... one that got longer within two windows.
  trips.observe(50ms, t0 + shortest_round_trip::window + 4s);
  CHECK(trips.estimate() == 2ms);
  trips.observe(50ms, t0 + 2 * shortest_round_trip::window + 5s);
  CHECK(trips.estimate() == 50ms);
}

TEST_CASE("a handler that throws out of run() leaves the other due keepers to run",
          "[unit][keep_schedule]") {
  fixture f;
  keep_schedule schedule(f.strand, f.pool, 4);
  fake_keeper throws;
  fake_keeper next;
  throws.when_due = [] { throw std::runtime_error("a lost-lock handler threw"); };
  const auto now = clock::now();
  schedule.schedule(throws, now - 2s, now - 2s);
  schedule.schedule(next, now - 1s, now - 1s);
  CHECK_THROWS_AS(settle(f.io), std::runtime_error);
  CHECK(throws.runs == 1);
  CHECK(next.runs == 0);
  settle(f.io);
  CHECK(next.runs == 1);
  CHECK(schedule.size() == 0);
  schedule.close();
}

TEST_CASE("keepers in line for room keep their places when a handler throws before they run",
          "[unit][keep_schedule]") {
  fixture f;
  keep_schedule schedule(f.strand, f.pool, 4);
  fake_keeper first;
  fake_keeper second;
  fake_keeper third;
  first.when_due = [] { throw std::runtime_error("a lost-lock handler threw"); };
  const auto later = clock::now() + 1h;  // in line: woken for room, not by time
  for (auto* k : {&first, &second, &third}) {
    schedule.schedule(*k, later, later);
    schedule.wait_for_room(*k);
  }
  CHECK_THROWS_AS(settle(f.io), std::runtime_error);
  std::vector<int> order;
  second.when_due = [&] { order.push_back(2); };
  third.when_due = [&] { order.push_back(3); };
  settle(f.io);
  CHECK(order == std::vector<int>{2, 3});
  schedule.close();
}
