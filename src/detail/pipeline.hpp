// One connection's commands in order, without I/O: what is to be written,
// which command the next reply answers, what waits for the link, and what a
// lost link does to each. The connection shell (connection.hpp) moves the
// bytes and calls the callbacks this returns; this decides.
#pragma once

#include <redlock/clock.hpp>
#include <redlock/detail/unique_function.hpp>
#include <redlock/error.hpp>
#include "detail/reply.hpp"

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

/// A command that may run twice without harm, and must reach the node
/// before `until`: sent again, in order, on the next link if the link fails
/// before its reply. Shared by every node's pipeline, so kept by reference.
struct command_retry {
  std::shared_ptr<const std::string> command;  ///< Null: not sent again.
  clock::time_point until{};
};

class pipeline {
 public:
  /// Called exactly once per command: with its reply, or with an error.
  using callback = unique_function<void(error_code, const reply&)>;
  using retry = command_retry;

  /// Queues `bytes` for the next write; the next reply not yet matched
  /// after those of the commands pushed before goes to `done`. `repeated`:
  /// it was written on a link that failed, so it may have run already.
  void push(std::string_view bytes, callback done, retry again = {}, bool repeated = false);
  /// Queues bytes whose answers nobody awaits (pub/sub subscriptions,
  /// answered by pushes).
  void push_unanswered(std::string_view bytes) { output_.append(bytes); }
  /// Keeps a command until on_link_ready(); copied only if `again` does
  /// not hold it.
  void hold(std::string_view bytes, callback done, retry again);

  /// While corked, nothing is written (wants_write() is false). Nests.
  void cork() noexcept { ++corked_; }
  void uncork() noexcept {
    if (corked_ > 0) --corked_;
  }
  /// Takes every cork off (a closing connection writes what it has).
  void uncork_all() noexcept { corked_ = 0; }
  bool corked() const noexcept { return corked_ > 0; }

  bool has_output() const noexcept { return !output_.empty(); }
  bool write_in_flight() const noexcept { return write_in_flight_; }
  /// Output queued, no write in flight, no cork.
  bool wants_write() const noexcept { return has_output() && !write_in_flight_ && corked_ == 0; }
  /// Everything queued, as one buffer that stays valid until the next
  /// call; every command pushed so far counts as written from now on.
  std::string_view take_write_buffer();
  void on_write_done() noexcept { write_in_flight_ = false; }
  /// The link is gone: output not yet written is dropped (the commands
  /// stay, to be failed or held by on_link_lost()).
  void drop_output() noexcept {
    output_.clear();
    write_in_flight_ = false;
  }

  /// Commands whose replies are still to come.
  std::size_t awaiting() const noexcept { return awaiting_.size(); }
  /// Commands held for the next link.
  std::size_t held() const noexcept { return held_.size(); }

  struct answered {
    callback done;
    bool repeated = false;
  };
  /// The command the reply just read answers. Requires awaiting() > 0.
  answered pop_reply();

  /// The link failed (`closing`: for good). Commands to send again whose
  /// time has not passed are held for the next link, ahead of anything held
  /// before: a written one is marked repeated. The callbacks of the others,
  /// awaited ones first, are returned in order, to be failed; commands
  /// those callbacks send are held behind the kept ones. The output stays
  /// (drop_output() goes first unless a closing link is flushing it).
  std::vector<callback> on_link_lost(clock::time_point now, bool closing);
  /// The link is ready: held commands go into the output in their order;
  /// the callbacks of those past their retry time are returned, to be
  /// failed with errc::node_timeout once the others are queued.
  std::vector<callback> on_link_ready(clock::time_point now);

 private:
  struct awaited_command {
    callback done;
    retry again;
    bool repeated = false;
  };
  struct held_command {
    std::string bytes;  ///< Empty when again.command holds them.
    callback done;
    retry again;
    bool repeated = false;

    std::string_view command() const noexcept {
      return again.command ? std::string_view(*again.command) : std::string_view(bytes);
    }
  };

 public:
  /// Callbacks taken out to be destroyed without being called.
  struct dropped_callbacks {
    std::deque<awaited_command> awaited;
    std::deque<held_command> held;
  };
  /// Takes every command's callback out, uncalled (the connection is
  /// abandoned: their executor is going away). The write buffer stays: a
  /// write may still be using it. Destroying a callback may free what
  /// refers to this pipeline, so the caller lets the result go last.
  dropped_callbacks abandon() noexcept;

 private:
  std::string output_;   ///< Queued since the last write.
  std::string writing_;  ///< The buffer of the write in flight.
  bool write_in_flight_ = false;
  unsigned corked_ = 0;
  std::deque<awaited_command> awaiting_;  ///< One per command pushed, in order.
  /// How many of awaiting_ (from the front) have gone into a write.
  std::size_t written_ = 0;
  std::deque<held_command> held_;
};

}  // namespace redlock::detail
