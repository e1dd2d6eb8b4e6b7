// The keep schedule's rounds: which due keepers run, how many extensions run
// at once, and the batch their extensions join. No sockets: the node pool is
// never started.
#include "detail/keep_schedule.hpp"

#include "detail/node_pool.hpp"

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include <functional>
#include <memory>
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
  strand_type strand = boost::asio::make_strand(io.get_executor());
  node_pool pool{strand, std::vector<redlock::node_config>(3),
                 [](std::size_t) { return connection_settings{}; }};
};

}  // namespace

TEST_CASE("at most max_in_flight extensions run at once, the earliest due first",
          "[unit][keep_schedule]") {
  fixture f;
  keep_schedule schedule(f.strand, f.pool, 4);
  std::vector<fake_keeper> keepers(10);
  std::vector<int> order;
  const auto now = clock::now();
  for (int i = 0; i < 10; ++i) {
    keepers[i].when_due = [&, i] {
      order.push_back(i);
      schedule.extension_started();
    };
    // Listed latest-first: the schedule orders them by their latest time.
    schedule.schedule(keepers[i], now - 1s, now - 1s + std::chrono::milliseconds(100 - i));
  }
  settle(f.io);
  CHECK(order == std::vector<int>{9, 8, 7, 6});
  CHECK(schedule.in_flight() == 4);
  CHECK(schedule.size() == 6);

  // More than half still running: the others wait.
  schedule.extension_ended();
  settle(f.io);
  CHECK(order.size() == 4);
  // Half done: the next round fills the room.
  schedule.extension_ended();
  settle(f.io);
  CHECK(order == std::vector<int>{9, 8, 7, 6, 5, 4});
  CHECK(schedule.in_flight() == 4);
  for (int i = 0; i < 4; ++i) schedule.extension_ended();
  settle(f.io);
  CHECK(order.size() == 10);
  CHECK(schedule.size() == 0);
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
  schedule.schedule(second, clock::now() - 1s, clock::now());
  settle(f.io);
  CHECK(first.runs == 1);
  CHECK(second.runs == 0);  // waits for room
  schedule.close();
  schedule.extension_ended();
  settle(f.io);
  CHECK(second.runs == 0);
}
