// The notice timer of `redlock acquire` and `exec`: a stop holds against a
// tick whose time had already come (its completion queued), the race that
// kept `exec` saying "still waiting" after its acquire had failed, until it
// was killed.
#include "redlock/repeating_timer.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

using namespace std::chrono_literals;

TEST_CASE("repeating_timer: a stop holds against a tick already due", "[cli][unit]") {
  boost::asio::io_context io;
  int ticks = 0;
  redlock::cli::repeating_timer notices(io, 10ms, [&] { ++ticks; });
  boost::asio::steady_timer stopper(io);
  stopper.expires_after(5ms);
  notices.start();
  stopper.async_wait([&](boost::system::error_code) { notices.stop(); });
  // Hold the thread past both times: the reactor then finds both timers due
  // at once and queues both completions, the stopper's first.
  boost::asio::post(io, [] { std::this_thread::sleep_for(30ms); });
  io.run_for(200ms);
  CHECK(ticks == 0);
}

TEST_CASE("repeating_timer: ticks every interval until stopped, never with a zero interval",
          "[cli][unit]") {
  boost::asio::io_context io;
  int ticks = 0;
  redlock::cli::repeating_timer* self = nullptr;
  redlock::cli::repeating_timer notices(io, 5ms, [&] {
    if (++ticks == 3) self->stop();  // from inside a tick: no next one
  });
  self = &notices;
  notices.start();
  io.run_for(500ms);  // ends early once nothing is left to run
  CHECK(ticks == 3);

  boost::asio::io_context idle;
  int never = 0;
  redlock::cli::repeating_timer off(idle, 0ms, [&] { ++never; });
  off.start();
  CHECK(idle.run_for(20ms) == 0);
  CHECK(never == 0);
}
