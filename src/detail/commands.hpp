// Every Redis command and Lua script the library sends, in one place.
// Commands come out already in RESP form, ready to be written.
#pragma once

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

// Scripts (KEYS are the held keys; ARGV[1] is the acquisition token):
/// All keys absent: sets each to the token with PX ARGV[2] and answers OK;
/// any key present: sets none and answers nil (like SET NX).
std::string_view acquire_all_script();
/// Every key absent or a hash owned by ARGV[3] with a live hold: adds the
/// token field (its expiry: now + ARGV[2] ms) to each (creating it), makes
/// any key that expires sooner live its longest hold + ARGV[4] ms (the
/// lock-delay), answers OK; otherwise changes nothing and answers nil. A key
/// with no live hold is taken for all, its owner too, until it expires: the
/// lock-delay after its last hold lapsed.
std::string_view reentrant_acquire_script();
/// Every key holds our token: each is made to expire in ARGV[2] ms unless it
/// already expires later (an extend never shortens a lock); returns 1. Any
/// key not ours: changes nothing, returns 0. The reentrant form checks the
/// owner (ARGV[3]) and that the token field has not expired, sets the field
/// to now + ARGV[2] ms, and the key to its longest hold + ARGV[4] ms.
std::string_view extend_script();
std::string_view reentrant_extend_script();
/// Deletes each key that still holds our token (reentrant: removes our token
/// field, and the key with its last hold, unless one that lapsed is within
/// its lock-delay, ARGV[4]; else the key lives its longest hold left + the
/// delay) and, if ARGV[2] (the releasing client's id) is not empty,
/// publishes it on that key's channel (ARGV[2+i], reentrant ARGV[4+i]) to
/// wake waiters. Returns 1 when every key held our token, else 0.
std::string_view release_script();
std::string_view reentrant_release_script();

// Fencing (docs/fencing.md). The node's fencing state is one hash,
// fencing_state_key: `valid` (present while the state is complete), `seen`
// (the run_id of the process that last checked it), `lost` (the id of a
// loss being waited out), `max`, `floor`, and `c:<key>` per lock key.
inline constexpr std::string_view fencing_state_key = "redlock:fencing";

/// A fenced acquire's answer: nil when some key is held by another owner
/// (like SET NX); "ok <fence>..." (one per key) when the acquisition holds
/// every key; "lost <id>" when the node's fencing state is not valid (it
/// then sets nothing). KEYS: the held keys, then fencing_state_key; ARGV:
/// token, ttl (plain: with the lock-delay), owner and lock-delay
/// (reentrant). The reentrant form answers the fence stored in the hold it
/// re-enters.
std::string_view fenced_acquire_script();
std::string_view fenced_reentrant_acquire_script();
/// Raises each key's counter to the given fence (and a reentrant hold's
/// stored fence); answers 1, or "lost <id>" when the state is not valid.
std::string_view fence_write_back_script();
/// Run first on every connection: drops `valid` when the server is not the
/// process that last checked the state (a restart may have loaded an older
/// snapshot). ARGV[1]: a fresh random id for the loss.
std::string_view fence_restart_check_script();
/// "<1 if valid, else 0> <max> <loss id, or - when none>"; "0 0 -" when
/// the node has no state.
std::string_view fence_state_script();
/// Re-seeds a node whose state is lost with id ARGV[1] from the largest
/// `max` of the others (ARGV[2]); answers 1, or 0 when the node's loss is
/// not (or no longer) ARGV[1].
std::string_view fence_reseed_script();

/// Reads a key without changing it; answers "none" when there is no key,
/// else "<type> <pttl> <holder>": the string's value, or a hash's `owner`.
std::string_view status_script();

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
/// The pub/sub channel on which the release of `key` is announced.
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
