// Wakes acquirers waiting for a resource when its holder releases it: the
// release script publishes on a per-key channel on every node, and one
// subscriber connection per node (opened on first use, shared by every
// waiter of the client) listens. A release by this same client is handed
// over at once, without the round trip through Redis.
#pragma once

#include <redlock/detail/unique_function.hpp>
#include "detail/connection.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace redlock::detail {

class wakeup_hub {
 public:
  using waiter_id = std::uint64_t;

  /// `self`: this client's id, the payload of its own release messages.
  wakeup_hub(strand_type strand, const std::vector<node_config>& nodes,
             connection_settings settings, std::string self);

  /// How a waiter learnt of a release.
  enum class wake_reason {
    /// This client released the key: its release commands are already queued
    /// on every connection, so an attempt sent now runs right after them.
    released_here,
    /// Another client's release, published on a node.
    announced,
  };

  /// Calls `wake` once, on the strand, when `key` is released and this
  /// waiter is first in line, unless cancel() comes first. Each release
  /// event wakes one waiter, the lowest `ticket` (the one waiting longest):
  /// no stampede of this client's waiters, and first come first served
  /// among them. Subscribes on first interest.
  waiter_id wait(const std::string& key, std::uint64_t ticket,
                 unique_function<void(wake_reason)> wake);
  /// This client has just queued the release of `key` on every connection:
  /// wakes the first waiter of `key`, if any. Messages carrying our own id
  /// are then ignored (this was their hand-over).
  void released_here(const std::string& key);
  /// Releases made by this client so far: an acquirer notes it when an
  /// attempt starts, to ask released_here_since() when the attempt fails.
  std::uint64_t releases_here() const noexcept { return releases_here_; }
  /// Whether this client released `key` after releases_here() was `since`:
  /// an acquirer whose attempt raced our own release was not yet waiting for
  /// the hand-over. Only the last few releases are remembered; older ones
  /// answer false (the retry delay still bounds the wait).
  bool released_here_since(std::string_view key, std::uint64_t since) const noexcept;
  /// A woken waiter gives up without having used its wake-up: the next
  /// waiter of `key`, if any, is woken for the same reason.
  void pass_on(const std::string& key, wake_reason why);
  /// A place in line, kept by a waiter across its attempts.
  std::uint64_t take_ticket() noexcept { return next_ticket_++; }
  /// Forgets a waiter; the last waiter of a key unsubscribes.
  void cancel(waiter_id id);
  void shutdown();
  /// Drops every waiter and subscriber callback without calling it.
  void abandon() noexcept;

 private:
  struct waiter {
    waiter_id id;
    std::uint64_t ticket;
    unique_function<void(wake_reason)> wake;
  };

  void on_message(std::string_view channel, wake_reason why);
  void subscribe_all(connection& node);
  void send_to_all(const std::string& command);
  void drop_key(const std::string& channel);

  strand_type strand_;
  std::vector<node_config> nodes_;
  connection_settings settings_;
  std::string self_;
  std::vector<std::shared_ptr<connection>> subscribers_;  ///< Empty until the first wait.
  /// By channel, in ticket order.
  std::unordered_map<std::string, std::vector<waiter>> waiters_;
  std::unordered_map<waiter_id, std::string> channel_of_;
  waiter_id next_id_ = 1;
  std::uint64_t next_ticket_ = 1;
  struct recent_release {
    std::uint64_t number = 0;  ///< Its releases_here_ count; 0: empty slot.
    std::size_t key_hash = 0;  ///< A collision only means one early retry.
  };
  std::uint64_t releases_here_ = 0;
  std::array<recent_release, 16> recent_{};
};

}  // namespace redlock::detail
