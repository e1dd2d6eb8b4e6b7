// leader_election: campaign for leadership, work while leading, step down on
// Ctrl-C so a follower takes over at once. Run several in separate shells:
//   leader_election NAME [host:port ...]   (default nodes: 127.0.0.1:7001 ... 7005)
#include <redlock/redlock.hpp>  // first: it includes <utility> before Asio

#include "example_nodes.hpp"

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
    fmt::print(stderr, "usage: leader_election NAME [host:port ...]\n");
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
  redlock::campaign_options options;
  options.lock.ttl = 3s;  // a crashed leader is replaced within about this long
  asio::steady_timer heartbeat(io);

  // The leader's work: a heartbeat that stops with the term.
  auto beat = std::make_shared<std::function<void(redlock::lease_token)>>();
  *beat = [&, beat](redlock::lease_token term) {
    if (term.stop_requested()) return;
    fmt::print("{}: leading\n", name);
    heartbeat.expires_after(1s);
    heartbeat.async_wait([beat, term](redlock::error_code ec) {
      if (!ec) (*beat)(term);
    });
  };
  redlock::leader_election election(
      locks, "example-leader", options,
      [&](const redlock::lock& held, redlock::lease_token term) {
        fmt::print("{}: elected ({} ms of validity)\n", name, held.remaining_validity().count());
        (*beat)(term);
      },
      [&](redlock::error_code reason) {
        heartbeat.cancel();
        fmt::print("{}: lost leadership: {}\n", name, reason.message());
      });
  election.campaign();
  fmt::print("{}: campaigning\n", name);

  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](redlock::error_code, int) {
    heartbeat.cancel();
    election.async_step_down([&](redlock::error_code ec) {
      fmt::print("{}: stepped down{}\n", name, ec ? ": " + ec.message() : "");
      locks.close();
    });
  });
  io.run();
}
