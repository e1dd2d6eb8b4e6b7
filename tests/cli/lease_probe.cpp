// A process that works under a lock the documented way (check the token
// before each side effect) until its token says stop, for the tests that
// pause it with SIGSTOP: it prints "working" after the first effect, and
// at the end "effects N last_check_ns T", T being the steady clock (shared
// by every process of the machine) when the last check that let a side
// effect through was made.
//
// Usage: redlock-lease-probe leader|scoped PORT[,PORT...] TTL_MS
#include <redlock/redlock.hpp>  // first: it includes <utility> before any Asio header

#include <fmt/format.h>
#include <boost/asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <string>
#include <thread>

namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

struct tally {
  long effects = 0;
  steady::time_point last_check{};
};

/// The documented loop: check, then act.
tally work(const redlock::lease_token& token) {
  tally done;
  for (;;) {
    const auto checked = steady::now();
    if (token.stop_requested()) return done;
    ++done.effects;  // the side effect
    done.last_check = checked;
    if (done.effects == 1) {
      fmt::print("working\n");
      std::fflush(stdout);
    }
    // No sleep: a thread resumed from SIGSTOP checks again at once, before
    // the client's executor can have delivered anything.
    std::this_thread::yield();
  }
}

void report(const tally& done) {
  fmt::print(
      "effects {} last_check_ns {}\n", done.effects,
      std::chrono::duration_cast<std::chrono::nanoseconds>(done.last_check.time_since_epoch())
          .count());
  std::fflush(stdout);
}

redlock::client_config config_for(const std::string& ports) {
  redlock::client_config config;
  config.nodes = redlock::parse_nodes(ports);
  config.warn_without_aof = false;
  return config;
}

int lead(const redlock::client_config& config, std::chrono::milliseconds ttl) {
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  std::thread runner([&] { io.run(); });
  redlock::client locks(io.get_executor(), config);
  redlock::campaign_options options;
  options.lock.ttl = ttl;
  std::promise<redlock::lease_token> elected;
  std::atomic<bool> first{true};
  redlock::leader_election election(
      locks, "probe", options,
      [&](const redlock::lock&, redlock::lease_token term) {
        if (first.exchange(false)) elected.set_value(term);
      },
      [](redlock::error_code) {});
  election.campaign();
  report(work(elected.get_future().get()));
  std::promise<void> stepped;
  election.async_step_down([&](redlock::error_code) { stepped.set_value(); });
  stepped.get_future().wait();
  locks.close();
  guard.reset();
  runner.join();
  return 0;
}

int scoped(const redlock::client_config& config, std::chrono::milliseconds ttl) {
  redlock::blocking_client locks(config);
  redlock::lock_options options;
  options.ttl = ttl;
  try {
    locks.run_exclusive("probe", options, {},
                        [](redlock::lease_token token) { report(work(token)); });
  } catch (const boost::system::system_error& e) {
    fmt::print("run_exclusive: {}\n", e.code().message());
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    fmt::print(stderr, "usage: redlock-lease-probe leader|scoped PORT[,PORT...] TTL_MS\n");
    return 2;
  }
  const std::string mode = argv[1];
  std::string nodes;
  for (char c : std::string(argv[2])) {
    if (c == ',') {
      nodes += ",";
    } else {
      if (nodes.empty() || nodes.back() == ',') nodes += "127.0.0.1:";
      nodes += c;
    }
  }
  const auto config = config_for(nodes);
  const std::chrono::milliseconds ttl{std::stol(argv[3])};
  if (mode == "leader") return lead(config, ttl);
  if (mode == "scoped") return scoped(config, ttl);
  fmt::print(stderr, "redlock-lease-probe: unknown mode {}\n", mode);
  return 2;
}
