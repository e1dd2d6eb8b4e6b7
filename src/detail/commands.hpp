// Every Redis command and Lua script the library sends, in one place.
// Commands come out already in RESP form, ready to be written.
#pragma once

#include <chrono>
#include <initializer_list>
#include <string>
#include <string_view>

namespace redlock::detail {

/// Deletes KEYS[1] only while it holds ARGV[1] (our token) and then, if
/// ARGV[2] is not empty, publishes ARGV[3] (the releasing client's id) on
/// channel ARGV[2] to wake waiters; returns 1 or 0.
std::string_view release_script();
/// While KEYS[1] holds ARGV[1], makes it expire in ARGV[2] ms unless it
/// already expires later (an extend never shortens a lock); returns 1 or 0.
std::string_view extend_script();

/// RESP encoding of one command (formatted by hiredis).
std::string format_command(std::initializer_list<std::string_view> args);

/// SET key token NX PX ttl: OK when set, nil when the key exists.
std::string acquire_command(std::string_view key, std::string_view token,
                            std::chrono::milliseconds ttl);
// Scripts go out as EVAL, never EVALSHA: a NOSCRIPT answer (a node whose
// script cache was flushed) would need a second command at the back of the
// pipeline, after commands that must run behind the script. EVAL costs the
// node no measurable time more (it hashes the body to find its cache entry).

/// `channel` empty: release without waking anyone (undoing a failed attempt).
/// `releaser`: the message published, so a client can tell its own releases
/// (which it hands over to its waiters at once) from others'.
std::string release_command(std::string_view key, std::string_view token, std::string_view channel,
                            std::string_view releaser);
/// The pub/sub channel on which the release of `key` is announced.
std::string release_channel(std::string_view key);
std::string extend_command(std::string_view key, std::string_view token,
                           std::chrono::milliseconds ttl);

/// Connection set-up.
std::string auth_command(std::string_view username, std::string_view password);
std::string select_command(int database);

}  // namespace redlock::detail
