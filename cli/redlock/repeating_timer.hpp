// Calls a function every interval until stopped. A stop holds against a tick
// whose timer had already expired when it came: cancel() alone cannot take
// back a completion that is already queued, which then ran and re-armed.
#pragma once

#include <redlock/detail/asio.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <utility>

namespace redlock::cli {

class repeating_timer {
 public:
  repeating_timer(boost::asio::io_context& io, std::chrono::milliseconds interval,
                  std::function<void()> tick)
      : timer_(io), interval_(interval), tick_(std::move(tick)) {}
  repeating_timer(const repeating_timer&) = delete;
  repeating_timer& operator=(const repeating_timer&) = delete;
  ~repeating_timer() { stop(); }

  /// Ticks every interval from now on (a zero interval never ticks).
  void start() {
    if (interval_.count() <= 0) return;
    *running_ = true;
    arm();
  }
  /// No tick after this call, even one whose time had already come.
  void stop() {
    *running_ = false;
    timer_.cancel();
  }

 private:
  void arm() {
    timer_.expires_after(interval_);
    // The flag, not `this`: a completion queued before the timer went away
    // must not touch it.
    timer_.async_wait([this, running = running_](boost::system::error_code ec) {
      if (ec || !*running) return;
      tick_();
      if (*running) arm();
    });
  }

  boost::asio::steady_timer timer_;
  std::chrono::milliseconds interval_;
  std::function<void()> tick_;
  std::shared_ptr<bool> running_ = std::make_shared<bool>(false);
};

}  // namespace redlock::cli
