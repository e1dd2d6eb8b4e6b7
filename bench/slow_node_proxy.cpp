// redlock-slow-proxy: puts one Redis node behind the tests' fault_proxy with a
// fixed reply delay, so that scripts/bench-compare.sh can make one of five
// nodes slow. Prints the port to connect to on one line of stdout, then runs
// until SIGTERM or SIGINT.
#include "support/fault_proxy.hpp"

#include <fmt/format.h>

#include <pthread.h>
#include <signal.h>

#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

namespace {

[[noreturn]] void usage(std::string_view problem) {
  fmt::print(stderr,
             "redlock-slow-proxy: {}\n"
             "usage: redlock-slow-proxy --upstream-port P [--delay-ms MS] [--request-delay-ms MS]\n"
             "                          [--batch-us US]\n"
             "  Listens on a free 127.0.0.1 port, forwards to 127.0.0.1:P, delays every reply\n"
             "  by --delay-ms (default 50) and every request by --request-delay-ms (default 0).\n"
             "  Chunks falling due within --batch-us (default 1000) of each other leave in one\n"
             "  write, so the proxy wakes at most once per window (a real slow link costs\n"
             "  this machine no CPU; the proxy should cost it little).\n"
             "  Prints the listening port, then runs until SIGTERM or SIGINT.\n",
             problem);
  std::exit(2);
}

long number(std::string_view flag, std::string_view text, long max) {
  long value = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < 0 || value > max) {
    usage(fmt::format("{} needs a number from 0 to {}, not '{}'", flag, max, text));
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  long upstream = -1;
  long reply_delay_ms = 50;
  long request_delay_ms = 0;
  long batch_us = 1000;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "-h" || flag == "--help") usage("help");
    if (i + 1 >= argc) usage(fmt::format("{} needs a value", flag));
    const std::string_view value = argv[++i];
    if (flag == "--upstream-port") {
      upstream = number(flag, value, 65535);
    } else if (flag == "--delay-ms") {
      reply_delay_ms = number(flag, value, 3'600'000);
    } else if (flag == "--batch-us") {
      batch_us = number(flag, value, 1'000'000);
    } else if (flag == "--request-delay-ms") {
      request_delay_ms = number(flag, value, 3'600'000);
    } else {
      usage(fmt::format("unknown flag '{}'", flag));
    }
  }
  if (upstream <= 0) usage("--upstream-port is required");

  // Block the signals before the proxy starts its thread, which inherits the
  // mask; this thread then takes them synchronously with sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  if (pthread_sigmask(SIG_BLOCK, &signals, nullptr) != 0) {
    fmt::print(stderr, "redlock-slow-proxy: cannot block signals\n");
    return 1;
  }

  try {
    redlock::test::fault_proxy proxy(static_cast<std::uint16_t>(upstream));
    proxy.set_reply_delay(
        {std::chrono::milliseconds(reply_delay_ms), std::chrono::milliseconds(0)});
    proxy.set_request_delay(
        {std::chrono::milliseconds(request_delay_ms), std::chrono::milliseconds(0)});
    proxy.set_batch_window(std::chrono::microseconds(batch_us));
    fmt::print("{}\n", proxy.port());
    std::fflush(stdout);

    int received = 0;
    while (sigwait(&signals, &received) != 0) {
    }
    fmt::print(stderr, "redlock-slow-proxy: signal {}, stopping\n", received);
  } catch (const std::exception& e) {
    fmt::print(stderr, "redlock-slow-proxy: {}\n", e.what());
    return 1;
  }
  return 0;
}
