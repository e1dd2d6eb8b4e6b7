// Every Redis command the library sends, in one place, already in RESP
// form, ready to be written; the Lua scripts they call are in scripts.hpp.
#pragma once

#include "detail/scripts.hpp"

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

/// What one acquisition holds on each node.
struct held_keys {
  /// `<prefix><resource>`, one per resource, in the caller's order.
  std::vector<std::string> keys;
  /// Empty: each key is a string holding the acquisition's token (what every
  /// Redlock client writes). Otherwise the lock is reentrant: each key is a
  /// hash with field `owner` = this value and one field per acquisition
  /// token that holds it, so the hold count is the number of token fields.
  std::string owner;

  bool plain_single() const noexcept { return keys.size() == 1 && owner.empty(); }
};

/// RESP encoding of one command (our own encoder: one allocation, sized first).
std::string format_command(std::span<const std::string_view> args);
std::string format_command(std::initializer_list<std::string_view> args);

/// SET key token NX PX ttl+lock_delay for a plain single key; one script
/// call for several keys or a reentrant lock (whose holds expire after the
/// TTL, the keys the lock-delay later). Either way OK when the acquisition
/// holds every key, nil when some key is held by another owner (or is
/// within its lock-delay).
std::string acquire_command(const held_keys& held, std::string_view token,
                            std::chrono::milliseconds ttl, std::chrono::milliseconds lock_delay);
/// The fenced acquire (fenced_acquire_script) of `held`.
std::string fenced_acquire_command(const held_keys& held, std::string_view token,
                                   std::chrono::milliseconds ttl,
                                   std::chrono::milliseconds lock_delay);
/// fence_write_back_script for `held`, one fence per key; `token` is the
/// loss id a node with lost state records.
std::string fence_write_back_command(const held_keys& held, std::span<const std::uint64_t> fences,
                                     std::string_view token);
std::string fence_restart_check_command(std::string_view loss_id);
std::string fence_state_command();
std::string fence_reseed_command(std::string_view loss_id, std::uint64_t floor);
// Scripts go out as EVAL, never EVALSHA: a NOSCRIPT answer (a node whose
// script cache was flushed) would need a second command at the back of the
// pipeline, after commands that must run behind the script. EVAL costs the
// node no measurable time more (it hashes the body to find its cache entry).

/// `releaser` empty: release without waking anyone (undoing a failed
/// attempt). Otherwise the message published, so a client can tell its own
/// releases (which it hands over to its waiters at once) from others'.
/// `lock_delay`: the acquisition's (a reentrant key keeps the owner's other
/// holds that long past their expiry).
std::string release_command(const held_keys& held, std::string_view token,
                            std::string_view releaser, std::chrono::milliseconds lock_delay);
/// The pub/sub channel on which the release of `key` is announced: this
/// prefix, then the key.
inline constexpr std::string_view release_channel_prefix = "redlock:released:";
std::string release_channel(std::string_view key);
/// Extends by `ttl`; the keys live `lock_delay` longer.
std::string extend_command(const held_keys& held, std::string_view token,
                           std::chrono::milliseconds ttl, std::chrono::milliseconds lock_delay);

/// One call of status_script() on `key`.
std::string status_command(std::string_view key);

/// Connection set-up.
std::string auth_command(std::string_view username, std::string_view password);
std::string select_command(int database);

}  // namespace redlock::detail
