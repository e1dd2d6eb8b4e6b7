// The Lua scripts the library runs on the nodes (sent by the commands of
// commands.hpp, always as EVAL). KEYS are an acquisition's keys (held_keys).
#pragma once

#include <string_view>

namespace redlock::detail {

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
/// Many plain single-key locks at once (a keeper batch): KEYS[i] is one
/// lock's key, ARGV[2i-1] its token and ARGV[2i] its key TTL in ms. Each key
/// that holds its token is extended as extend_script does; returns a string
/// of #KEYS characters, the i-th '1' (extended) or '0' (not ours).
std::string_view extend_many_script();
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

}  // namespace redlock::detail
