// The resource side of fencing: checks that refuse writes carrying a
// fencing token older than one already accepted (lock_options::fenced,
// docs/fencing.md, docs/usage.md "Fencing tokens"). The lock orders its
// holders; only the resource can stop a holder that acts after its lease
// ended.
//
// Every check here admits a write iff
//   fence > last  ||  (fence == last && token == last_token)
// where `last` is the largest fence admitted before and `last_token` the
// lock token (lock::token()) that came with it. The tie-break by token lets
// the same hold write several times with its fence, and refuses a second
// holder that got an equal fence (possible only when two acquires overlapped
// in time, i.e. when Redlock's timing assumptions failed: docs/fencing.md).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace redlock {

/// For state an application keeps itself (in memory, in one process):
/// admits a write iff its fence is larger than every fence admitted before,
/// or equal to the last one with the same lock token (the same holder
/// writing again). Fence 0 (the fence of a lock that is not fenced) is never
/// admitted. Thread-safe: admit() decides and records under one mutex, so
/// concurrent writers are ordered like the calls.
///
/// admit() and the write it allows must be one step for the other writers:
/// make both under the application's own mutex for that state, or a stale
/// holder admitted just before a newer one could still write after it.
class fence_checker {
 public:
  /// True when the write carrying (`fence`, `token`) may go ahead; the
  /// checker then remembers it as the last one. `token` is lock::token()
  /// of the hold that got `fence`. False (and nothing remembered) for a
  /// stale fence, an equal fence with another token, or fence 0.
  bool admit(std::uint64_t fence, std::string_view token);
  /// The largest fence admitted so far (0 before the first).
  std::uint64_t last() const;
  /// The token that came with last() (empty before the first).
  std::string last_token() const;

 private:
  mutable std::mutex mutex_;
  std::uint64_t last_ = 0;
  std::string last_token_;
};

/// The largest fence fenced_set_script() handles exactly: 2^53 - 1 (Lua
/// numbers are doubles). The script refuses larger ones with an error; the
/// lock's fences, counted up by one per fenced acquire, stay far below.
inline constexpr std::uint64_t max_script_fence = (std::uint64_t{1} << 53) - 1;

/// A Lua script for a resource kept in Redis, run with EVAL (or EVALSHA of
/// its SCRIPT LOAD): KEYS[1] the fence record, KEYS[2] the data key;
/// ARGV[1] the fence (decimal), ARGV[2] the lock token, ARGV[3] the new
/// value. Atomically writes the value (plain SET: the data key keeps no
/// TTL) and records "<fence> <token>" in KEYS[1] (no TTL) iff the fence is
/// larger than the recorded one, or equal with the same token (the holder
/// resending); a missing record counts as fence 0. Answers {1, fence} when
/// written, {0, recorded fence} when refused as stale.
///
/// Answers an error reply, and writes nothing, when ARGV[1] is not a
/// decimal integer in [1, max_script_fence] without leading zeros (as
/// std::to_string writes it), or when KEYS[1] holds something this script did
/// not write. Neither key may have a TTL, be evicted or be flushed: a lost
/// fence record accepts the next write whatever its fence. In Redis Cluster both
/// keys must share a hash slot ("{account:42}:fence", "{account:42}").
std::string_view fenced_set_script();

/// The EVAL command that runs fenced_set_script() on (`fence_key`,
/// `data_key`) with (`fence`, `token`, `value`), one argument per element:
/// {"EVAL", script, "2", fence_key, data_key, fence, token, value}, ready
/// for redisCommandArgv or any client that sends an argument vector.
std::vector<std::string> fenced_set_command(std::string_view fence_key, std::string_view data_key,
                                            std::uint64_t fence, std::string_view token,
                                            std::string_view value);

}  // namespace redlock
