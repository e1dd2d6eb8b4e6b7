// The one timer behind the acquires' and releases' deadlines: what runs,
// when, what a disarm or a re-arm does, and what keeps an owner alive.
#include "detail/deadline_queue.hpp"

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

struct fake_deadline final : deadline {
  std::function<void()> when_due;
  int runs = 0;
  void on_deadline() override {
    ++runs;
    if (when_due) when_due();
  }
};

struct queue_fixture {
  boost::asio::io_context io;
  deadline_queue queue{make_core_strand(io.get_executor())};
  /// Stands for the client's core, which owns the queue.
  std::shared_ptr<int> owner = std::make_shared<int>(0);

  queue_fixture() { queue.keep_alive_with(owner); }

  /// Runs until nothing is ready; returns the handlers run.
  std::size_t settle() {
    io.restart();
    return io.poll();
  }
};

}  // namespace

TEST_CASE("deadlines run in time order once passed, and a disarmed one never runs",
          "[unit][deadline_queue]") {
  queue_fixture f;
  fake_deadline first;
  fake_deadline second;
  fake_deadline gone;
  std::vector<int> order;
  first.when_due = [&] { order.push_back(1); };
  second.when_due = [&] { order.push_back(2); };
  const auto now = clock::now();
  f.queue.arm(second, now - 1ms, nullptr);
  f.queue.arm(gone, now - 3ms, nullptr);
  f.queue.arm(first, now - 2ms, nullptr);
  CHECK(f.queue.size() == 3);
  (void)f.queue.disarm(gone);
  CHECK_FALSE(gone.armed());
  f.io.run();  // nothing left armed: run() returns
  CHECK(order == std::vector<int>{1, 2});
  CHECK(gone.runs == 0);
  CHECK(f.queue.size() == 0);
  CHECK_FALSE(f.queue.timer_waiting());
}

TEST_CASE("a deadline not yet passed does not run, and re-armed only its last time counts",
          "[unit][deadline_queue]") {
  queue_fixture f;
  fake_deadline d;
  f.queue.arm(d, clock::now() + 1h, nullptr);
  f.settle();
  CHECK(d.runs == 0);
  CHECK(f.queue.timer_waiting());
  // Earlier: the timer is armed again for it.
  f.queue.arm(d, clock::now() - 1ms, nullptr);
  f.settle();
  CHECK(d.runs == 1);
  CHECK_FALSE(d.armed());
  // Later: the wait for the earlier time finds nothing due.
  f.queue.arm(d, clock::now() - 1ms, nullptr);
  f.queue.arm(d, clock::now() + 1h, nullptr);
  f.settle();
  CHECK(d.runs == 1);
  CHECK(d.armed());
  (void)f.queue.disarm(d);  // a deadline must not go while armed
}

TEST_CASE("the owner lives while armed and through its run, and disarm hands it back",
          "[unit][deadline_queue]") {
  queue_fixture f;
  fake_deadline d;
  auto owner = std::make_shared<int>(7);
  std::weak_ptr<int> watch = owner;
  f.queue.arm(d, clock::now() + 1h, std::move(owner));
  CHECK(watch.use_count() == 1);
  auto back = f.queue.disarm(d);
  CHECK(back.get() == watch.lock().get());
  back.reset();
  CHECK(watch.expired());

  owner = std::make_shared<int>(8);
  watch = owner;
  bool alive_while_running = false;
  d.when_due = [&] { alive_while_running = !watch.expired(); };
  f.queue.arm(d, clock::now() - 1ms, std::move(owner));
  f.settle();
  CHECK(d.runs == 1);
  CHECK(alive_while_running);
  CHECK(watch.expired());
}

TEST_CASE("one that runs may disarm or re-arm another due at the same time",
          "[unit][deadline_queue]") {
  queue_fixture f;
  fake_deadline a;
  fake_deadline b;
  fake_deadline c;
  const auto at = clock::now() - 1ms;
  a.when_due = [&] {
    (void)f.queue.disarm(b);
    f.queue.arm(c, clock::now() + 1h, nullptr);  // c's earlier time no longer counts
  };
  f.queue.arm(a, at - 1ms, nullptr);
  f.queue.arm(b, at, nullptr);
  f.queue.arm(c, at, nullptr);
  f.settle();
  CHECK(a.runs == 1);
  CHECK(b.runs == 0);
  CHECK(c.runs == 0);
  CHECK(c.armed());
  (void)f.queue.disarm(c);
}

TEST_CASE(
    "one that arms itself again for a time already passed runs on the next wake, "
    "not in a loop",
    "[unit][deadline_queue]") {
  queue_fixture f;
  fake_deadline d;
  d.when_due = [&] {
    if (d.runs < 3) f.queue.arm(d, clock::now() - 1ms, nullptr);
  };
  f.queue.arm(d, clock::now() - 1ms, nullptr);
  f.io.run();
  CHECK(d.runs == 3);
  CHECK_FALSE(d.armed());
}

TEST_CASE("after close, the timer stops waiting once nothing is armed", "[unit][deadline_queue]") {
  queue_fixture f;
  fake_deadline d;
  f.queue.arm(d, clock::now() + 1h, nullptr);
  (void)f.queue.disarm(d);
  // Lazily: the timer still waits for the deadline that went.
  CHECK(f.queue.timer_waiting());
  f.queue.close();
  CHECK_FALSE(f.queue.timer_waiting());
  f.io.run();  // returns: nothing waits

  // Armed at close: it still runs, and then nothing waits.
  queue_fixture g;
  fake_deadline e;
  g.queue.arm(e, clock::now() + 1h, nullptr);
  g.queue.close();
  CHECK(g.queue.timer_waiting());
  g.queue.arm(e, clock::now() - 1ms, nullptr);
  g.io.run();
  CHECK(e.runs == 1);
  fake_deadline later;
  g.queue.arm(later, clock::now() + 1h, nullptr);
  (void)g.queue.disarm(later);
  CHECK_FALSE(g.queue.timer_waiting());
}

TEST_CASE("abandon lets every owner go without running it", "[unit][deadline_queue]") {
  queue_fixture f;
  fake_deadline a;
  fake_deadline b;
  auto first = std::make_shared<int>(1);
  auto second = std::make_shared<int>(2);
  std::weak_ptr<int> watch_first = first;
  std::weak_ptr<int> watch_second = second;
  f.queue.arm(a, clock::now() - 1ms, std::move(first));
  f.queue.arm(b, clock::now() + 1h, std::move(second));
  f.queue.abandon();
  CHECK(watch_first.expired());
  CHECK(watch_second.expired());
  CHECK(f.queue.size() == 0);
  f.settle();
  CHECK(a.runs == 0);
  CHECK(b.runs == 0);
}

TEST_CASE("a handler that throws out of run() leaves the other deadlines to run",
          "[unit][deadline_queue]") {
  queue_fixture f;
  fake_deadline throws;
  fake_deadline due_too;
  fake_deadline later;
  throws.when_due = [] { throw std::runtime_error("a completion handler threw"); };
  const auto now = clock::now();
  f.queue.arm(throws, now - 2ms, nullptr);
  f.queue.arm(due_too, now - 1ms, nullptr);
  f.queue.arm(later, now + 20ms, nullptr);
  CHECK_THROWS_AS(f.io.run(), std::runtime_error);
  CHECK(throws.runs == 1);
  f.io.restart();
  f.io.run();  // returns once nothing is armed
  CHECK(due_too.runs == 1);
  CHECK(later.runs == 1);
  CHECK(f.queue.size() == 0);
}

TEST_CASE("a wake after the queue's owner went does nothing", "[unit][deadline_queue]") {
  queue_fixture f;
  fake_deadline d;
  f.queue.arm(d, clock::now() - 1ms, nullptr);
  f.owner.reset();  // the client's core is going
  f.settle();
  CHECK(d.runs == 0);
  (void)f.queue.disarm(d);
}
