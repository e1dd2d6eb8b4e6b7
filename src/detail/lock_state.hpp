// What copies of one redlock::lock share, and the only way to make a handle
// that holds something.
#pragma once

#include "detail/commands.hpp"

#include <redlock/config.hpp>
#include <redlock/lock.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace redlock::detail {

/// Written on the client's strand, read from any thread.
struct lock_state {
  lock_state(std::uint64_t client, std::vector<std::string> resources, held_keys keys,
             std::string token, std::chrono::milliseconds ttl,
             std::chrono::milliseconds request_timeout, clock::time_point deadline,
             std::uint64_t held_elsewhere_at_acquire, bool validity_known = true,
             std::chrono::milliseconds lock_delay = {})
      : client(client),
        resources(std::move(resources)),
        keys(std::move(keys)),
        token(std::move(token)),
        request_timeout(request_timeout),
        lock_delay(lock_delay),
        held_elsewhere_at_acquire(held_elsewhere_at_acquire),
        ttl_ms(ttl.count()),
        deadline_ns(deadline.time_since_epoch().count()),
        validity_known(validity_known) {}

  const std::uint64_t client;  ///< client_core::serial() of the client that acquired it.
  const std::vector<std::string> resources;  ///< Never empty.
  const held_keys keys;  ///< What it holds on each node (the owner for a reentrant lock).
  const std::string token;
  /// Fencing tokens, one per resource; empty for a lock acquired without
  /// fencing. Set once, before the handle is handed out.
  std::vector<std::uint64_t> fences;
  /// lock_options::request_timeout of the acquire (0: derived from the TTL),
  /// also used by its extends and release.
  const std::chrono::milliseconds request_timeout;
  /// lock_options::lock_delay of the acquire (or the adopt): every
  /// extension makes the keys live this much longer than its TTL (a
  /// reentrant hold's own expiry is the TTL alone: its scripts, release
  /// included, take the delay as an argument of its own).
  const std::chrono::milliseconds lock_delay;
  /// Bit i: another owner's key refused our SET on node i, so our key was
  /// never there (an extend cannot count that node as a possible holder).
  /// Also set by refusals that arrive after the quorum. Strand only.
  std::uint64_t held_elsewhere_at_acquire;

  bool never_held_on(std::size_t node) const noexcept {
    return (held_elsewhere_at_acquire >> node) & 1U;
  }
  void held_elsewhere_on(std::size_t node) noexcept {
    held_elsewhere_at_acquire |= std::uint64_t{1} << node;
  }
  std::atomic<std::chrono::milliseconds::rep> ttl_ms;
  std::atomic<clock::rep> deadline_ns;
  /// False for a handle adopted by token (client::adopt) until an extend
  /// through it lands: its deadline is then no bound on anything yet.
  std::atomic<bool> validity_known;
  std::atomic<bool> released{false};
  std::atomic<bool> found_lost{false};  ///< Written on the strand only.

  /// The request timeout of an operation on this lock whose TTL is `ttl`.
  std::chrono::milliseconds request_timeout_for(std::chrono::milliseconds ttl) const noexcept {
    lock_options timing;
    timing.ttl = ttl;
    // A timeout chosen for a longer TTL must still leave this one room.
    if (request_timeout < ttl) timing.request_timeout = request_timeout;
    return effective_request_timeout(timing);
  }

  /// How long the keys are made to live by an extension whose TTL is `ttl`
  /// (a reentrant key: as long as the owner's longest hold, plus the delay).
  /// Both are validated (at most max_duration each), so the sum fits.
  std::chrono::milliseconds key_ttl(std::chrono::milliseconds ttl) const noexcept {
    return ttl + lock_delay;
  }

  clock::time_point deadline() const noexcept {
    return clock::time_point(clock::duration(deadline_ns.load(std::memory_order_acquire)));
  }
  /// An extend that reached a quorum: the keys expire no earlier than either
  /// deadline (they are never shortened), so the later one holds.
  /// A lock found lost stays lost, whatever a concurrent extend that lands
  /// later says.
  void extended(std::chrono::milliseconds ttl, clock::time_point deadline) noexcept {
    if (found_lost.load(std::memory_order_acquire)) return;
    ttl_ms.store(ttl.count(), std::memory_order_relaxed);
    validity_known.store(true, std::memory_order_release);
    const auto wanted = deadline.time_since_epoch().count();
    auto seen = deadline_ns.load(std::memory_order_acquire);
    while (seen < wanted && !deadline_ns.compare_exchange_weak(seen, wanted)) {
    }
  }
  /// The lock is known not to hold on a majority any more (the caller
  /// tells its keepers: client_core::lock_changed).
  void lost(clock::time_point now) {
    found_lost.store(true, std::memory_order_release);
    const auto cut = now.time_since_epoch().count();
    auto seen = deadline_ns.load(std::memory_order_acquire);
    while (seen > cut && !deadline_ns.compare_exchange_weak(seen, cut)) {
    }
  }
  /// True for the first caller only (who tells the keepers).
  bool begin_release() { return !released.exchange(true); }
};

/// The library's (and its tests') door to lock's private constructor.
struct lock_access {
  static redlock::lock make(std::shared_ptr<lock_state> state, std::vector<node_outcome> nodes) {
    return redlock::lock(std::move(state), std::move(nodes));
  }
  /// A handle that holds nothing but tells each node's outcome.
  static redlock::lock failed(std::vector<node_outcome> nodes) {
    return redlock::lock(nullptr, std::move(nodes));
  }
  static const std::shared_ptr<lock_state>& state(const redlock::lock& held) { return held.state_; }
};

}  // namespace redlock::detail
