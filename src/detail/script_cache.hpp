// The scripts sent by EVALSHA, and the way back to EVAL when a node has lost
// them (a SCRIPT FLUSH while the connection is up; a new connection loads them).
//
// A node hashes an EVAL's whole body on every call to find its cache entry;
// EVALSHA names the entry. Only the release scripts go by SHA: they run on
// every lock, and running one late is safe. The order a NOSCRIPT changes:
// the EVAL sent again runs behind the commands sent after the EVALSHA.
// - The release itself: a compare-and-delete of its own token, run twice
//   or late, deletes nothing of anyone else's (and announces when it runs).
// - What ran ahead of it on that node: an acquire attempt of this client
//   (the hand-over's) refused for a key the release frees a moment later;
//   its reply is marked (reply::overtook) and acquire_op sends it to that
//   node again, behind the release. Another client's commands are on other
//   connections: for them the release simply ran when it ran.
// - An undo (the release script without an announcement) behind its own
//   acquire's next attempt: the same resend.
// The acquire scripts stay EVAL: one running behind its own undo would leave
// a key nobody holds. The other scripts stay EVAL too (commands.hpp).
#pragma once

#include "detail/reply.hpp"

#include <span>
#include <string>
#include <string_view>

namespace redlock::detail {

/// The SHA1 of `data` in lower-case hex, as Redis names a script.
std::string sha1_hex(std::string_view data);

/// The SHA1 of `script`, computed once, if it is one of the scripts sent
/// by EVALSHA; empty otherwise.
std::string_view cached_script_sha1(std::string_view script);

/// SCRIPT LOAD of each script sent by EVALSHA: what a command connection
/// sends first, so that its EVALSHAs find them.
std::span<const std::string> script_load_commands();

/// The EVAL form of `command`, an EVALSHA of one of those scripts (RESP,
/// as commands.hpp makes it), with the same keys and arguments; empty when
/// `command` is anything else.
std::string eval_fallback(std::string_view command);

/// The node did not have the script an EVALSHA named (and ran nothing).
inline bool script_missing(const reply& r) noexcept {
  return r.is_error() && r.text.starts_with("NOSCRIPT");
}

}  // namespace redlock::detail
