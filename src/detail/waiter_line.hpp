// Who is woken when a key is released, without any I/O: this client's
// waiters per release channel in ticket order, and its memory of its own
// recent releases. The wake-up hub owns one and does the subscribing.
#pragma once

#include <redlock/detail/unique_function.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace redlock::detail {

/// How a waiter learnt of a release.
enum class wake_reason {
  /// This client released the key: its release commands are already queued
  /// on every connection, so an attempt sent now runs right after them.
  released_here,
  /// Another client's release, published on a node.
  announced,
};

class waiter_line {
 public:
  using waiter_id = std::uint64_t;
  using wake_function = unique_function<void(wake_reason)>;

  /// A place in line, kept by a waiter across its attempts.
  std::uint64_t take_ticket() noexcept { return next_ticket_++; }

  struct joined {
    waiter_id id;
    bool first;  ///< Nobody waited on the channel: it needs subscribing.
  };
  /// Queues `wake` on `channel` behind every lower ticket (the ones waiting
  /// longest): first come, first served within the client.
  joined join(const std::string& channel, std::uint64_t ticket, wake_function wake);
  /// Takes the waiter out of line (unknown ids are ignored). Returns its
  /// channel if nobody waits there any more: the caller unsubscribes.
  std::optional<std::string> leave(waiter_id id);
  /// The first waiter of `channel`, out of line; empty if nobody waits.
  /// The channel stays known even if now empty, since the woken waiter
  /// usually rejoins: forget_if_idle() decides once it has run.
  wake_function take_first(const std::string& channel);
  /// Forgets `channel` if it is known and nobody waits on it; true if so
  /// (the caller unsubscribes).
  bool forget_if_idle(const std::string& channel);
  bool nobody_waits() const noexcept { return channel_of_.empty(); }
  /// Whether anyone waits on `channel`.
  bool waited_on(const std::string& channel) const;
  /// The channels known (waited on, or emptied by take_first and not yet
  /// forgotten): what a reconnected subscriber subscribes again.
  std::vector<std::string> channels() const;
  /// Drops every waiter without calling it.
  void clear() noexcept;

  /// This client has queued the release of `key` on every connection.
  void note_release_here(std::string_view key) noexcept;
  /// Releases made by this client so far: an acquirer notes it when an
  /// attempt starts, to ask released_here_since() when the attempt fails.
  std::uint64_t releases_here() const noexcept { return releases_here_; }
  /// Whether this client released `key` after releases_here() was `since`:
  /// an acquirer whose attempt raced our own release was not yet waiting for
  /// the hand-over. Only the last few releases are remembered; older ones
  /// answer false (the retry delay still bounds the wait).
  bool released_here_since(std::string_view key, std::uint64_t since) const noexcept;

 private:
  struct waiter {
    waiter_id id;
    std::uint64_t ticket;
    wake_function wake;
  };
  struct recent_release {
    std::uint64_t number = 0;  ///< Its releases_here_ count; 0: empty slot.
    std::size_t key_hash = 0;  ///< A collision only means one early retry.
  };

  /// By channel, in ticket order.
  std::unordered_map<std::string, std::vector<waiter>> waiting_;
  std::unordered_map<waiter_id, std::string> channel_of_;
  waiter_id next_id_ = 1;
  std::uint64_t next_ticket_ = 1;
  std::uint64_t releases_here_ = 0;
  std::array<recent_release, 16> recent_{};
};

}  // namespace redlock::detail
