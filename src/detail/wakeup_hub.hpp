// Wakes acquirers waiting for a resource when its holder releases it: the
// release script publishes on a per-key channel on every node, and one
// subscriber connection per node (opened on first use, shared by every
// waiter of the client) listens. Who is woken is the waiter_line's call.
// A wake-up caused by a call (this client's release, a waiter passing one
// on) is handed back to the caller to start: a release starts it inside its
// own cork. A message from a node is delivered from a posted handler.
#pragma once

#include "detail/lock_state.hpp"
#include "detail/subscriber_connection.hpp"
#include "detail/waiter_line.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace redlock::detail {

class wakeup_hub;

/// A waiter taken out of line for one release. start() calls it; then the
/// hub unsubscribes the channel if nobody waits on it any more (the woken
/// waiter usually rejoins first). Dropped unstarted, the waiter is freed
/// without being called.
class wakeup {
 public:
  wakeup() = default;
  explicit operator bool() const noexcept { return static_cast<bool>(wake_); }
  void start();

 private:
  friend class wakeup_hub;
  wakeup(wakeup_hub* hub, std::string channel, waiter_line::wake_function wake, wake_reason why)
      : hub_(hub), channel_(std::move(channel)), wake_(std::move(wake)), why_(why) {}

  wakeup_hub* hub_ = nullptr;
  std::string channel_;
  waiter_line::wake_function wake_;
  wake_reason why_ = wake_reason::announced;
};

class wakeup_hub {
 public:
  using waiter_id = waiter_line::waiter_id;

  /// `self`: this client's id, the payload of its own release messages.
  wakeup_hub(strand_type strand, const std::vector<node_config>& nodes,
             connection_settings settings, std::string self);

  /// Queues `wake` for the next release of `key` (see waiter_line::join),
  /// until cancel(). Subscribes on first interest.
  waiter_id wait(const std::string& key, std::uint64_t ticket, waiter_line::wake_function wake);
  /// This client has just queued the release of `key` on every connection:
  /// returns the first waiter of `key`, if any, for the caller to start
  /// while its release is still corked. Messages carrying our own id are
  /// ignored (this was their hand-over).
  [[nodiscard]] wakeup released_here(const std::string& key);
  /// A woken waiter gives up without having used its wake-up: returns the
  /// next waiter of `key`, if any, for the caller to start.
  [[nodiscard]] wakeup pass_on(const std::string& key, wake_reason why);
  std::uint64_t releases_here() const noexcept { return line_.releases_here(); }
  bool released_here_since(std::string_view key, std::uint64_t since) const noexcept {
    return line_.released_here_since(key, since);
  }
  std::uint64_t take_ticket() noexcept { return line_.take_ticket(); }
  /// This client has just acquired `lock`: remembered for each of its keys
  /// that someone here waits on (see held_here_until), until the next
  /// holder or until nobody waits there any more.
  void acquired_here(const std::shared_ptr<lock_state>& lock);
  /// Until when a lock of this client that the nodes would set against an
  /// acquire for `owner` (held_keys::owner: empty, or the reentrant owner)
  /// holds `key`; min() if none is known. Only locks acquired while someone
  /// here waited on the key are known, and only while they are neither
  /// released (through any handle of this client) nor lost; once after each
  /// release of the key announced by another client (which may have been of
  /// this very lock, through a handle adopted elsewhere), it answers min().
  clock::time_point held_here_until(const std::string& key, std::string_view owner,
                                    clock::time_point now);
  /// A node published a release on `channel` (not ours): the first waiter
  /// is woken from a posted handler, not from inside the subscriber's
  /// reader. It stays in line until then, so the same release's messages
  /// from the other nodes, arriving meanwhile, add nothing, and a hand-over
  /// by this client meanwhile goes to it (and replaces the delivery).
  void announced(std::string_view channel);
  /// What a posted delivery holds on to while it waits to run (the client's
  /// core, which owns this hub); it is skipped once that is gone.
  void keep_alive_with(std::weak_ptr<void> owner) { owner_ = std::move(owner); }
  /// Forgets a waiter; the last waiter of a key unsubscribes.
  void cancel(waiter_id id);
  void close();
  /// Drops every waiter and subscriber callback without calling it.
  void abandon() noexcept;

 private:
  friend class wakeup;

  wakeup take_first(const std::string& channel, wake_reason why);
  /// The posted half of announced(): wakes the first waiter unless a
  /// hand-over replaced delivery number `number`.
  void deliver(const std::string& channel, std::uint64_t number);
  /// After a wake-up ran: unsubscribes `channel` if nobody waits on it.
  void settle(const std::string& channel);
  void start_subscribers();
  void subscribe_all(subscriber_connection& node);
  void send_to_all(const std::string& command);

  strand_type strand_;
  std::vector<node_config> nodes_;
  connection_settings settings_;
  std::string self_;
  std::vector<std::shared_ptr<subscriber_connection>>
      subscribers_;  ///< Empty until the first wait.
  waiter_line line_;
  std::weak_ptr<void> owner_;
  /// By channel: the last lock this client acquired on it while someone here
  /// waited (weak: a handle may be dropped on any thread).
  struct holder {
    std::weak_ptr<const lock_state> lock;
    /// Another client announced a release of the key since: the next
    /// look-up says "not known" once, so that a waiter asks the nodes.
    bool ask_nodes = false;
  };
  std::unordered_map<std::string, holder> holders_;
  /// Channels with a delivery posted, and its number.
  std::unordered_map<std::string, std::uint64_t> posted_;
  std::uint64_t deliveries_ = 0;
};

}  // namespace redlock::detail
