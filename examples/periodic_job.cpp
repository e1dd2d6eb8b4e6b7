// periodic_job: run a job at most once every 10 s across all instances.
// Start several in separate shells; each due time runs on one of them:
//   periodic_job NAME [host:port ...]   (default nodes: 127.0.0.1:7001 ... 7005)
#include <redlock/redlock.hpp>  // first: it includes <utility> before Asio

#include "example_nodes.hpp"

#include <fmt/chrono.h>
#include <fmt/core.h>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <memory>
#include <string>

using namespace std::chrono_literals;
namespace asio = boost::asio;

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: periodic_job NAME [host:port ...]\n");
    return 2;
  }
  const std::string name = argv[1];
  redlock::client_config config;
  try {
    config.nodes = example_nodes(argc, argv, 2);
  } catch (const redlock::config_error& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  }

  asio::io_context io;
  redlock::client locks(io.get_executor(), config);
  redlock::periodic_options options;
  options.when = redlock::schedule::every(10s);  // or schedule::daily_at("02:30")
  options.max_clock_skew = 2s;                   // the instances' clocks agree within 2 s
  options.lock.ttl = 5s;                         // a crashed run frees the job within 5 s
  asio::steady_timer work(io);

  redlock::periodic_job job(
      locks, "example-report", options,
      [&](const redlock::occurrence& due, redlock::keeper& kept, redlock::work_done done) {
        fmt::print("{}: running the job due at {:%T} UTC\n", name,
                   std::chrono::floor<std::chrono::seconds>(due.due));
        // The "work": 3 s, cut short if the lost-lock signal fires.
        work.expires_after(3s);
        kept.async_wait_lost([&work](redlock::error_code ec) {
          if (ec != asio::error::operation_aborted) work.cancel();
        });
        work.async_wait([done = std::make_shared<redlock::work_done>(std::move(done))](
                            redlock::error_code ec) { (*done)(ec); });
      },
      [&](const redlock::occurrence& due, redlock::occurrence_outcome outcome,
          redlock::error_code ec) {
        static const char* names[] = {"ran",
                                      "claimed elsewhere",
                                      "previous run still going",
                                      "missed",
                                      "failed",
                                      "contended (votes kept splitting)"};
        fmt::print("{}: due {:%T}: {}{}\n", name, std::chrono::floor<std::chrono::seconds>(due.due),
                   names[static_cast<int>(outcome)], ec ? " (" + ec.message() + ")" : "");
      });
  job.start();

  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](redlock::error_code, int) {
    job.stop();
    work.cancel();
    locks.close();
  });
  io.run();
}
