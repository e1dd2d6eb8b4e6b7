// The resource side of fencing: checks that refuse writes carrying a
// fencing token older than one already accepted (lock_options::fenced,
// docs/fencing.md). The lock orders its holders; only the resource can stop
// a holder that acts after its lease ended.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace redlock {

/// For state an application keeps itself (in memory, in one process):
/// admits a write iff its fence is larger than every fence admitted before,
/// or equal to the last one with the same lock token (the same holder
/// writing again). Thread-safe.
class fence_checker {
 public:
  /// True when the write carrying (`fence`, `token`) may go ahead; the
  /// checker then remembers it as the last one. `token` is lock::token()
  /// of the hold that got `fence`.
  bool admit(std::uint64_t fence, std::string_view token);
  /// The largest fence admitted so far (0 before the first).
  std::uint64_t last() const;

 private:
  mutable std::mutex mutex_;
  std::uint64_t last_ = 0;
  std::string last_token_;
};

/// A Lua script for a resource kept in Redis, run with EVAL:
/// KEYS[1] the fence record (no TTL), KEYS[2] the data key; ARGV[1] the
/// fence, ARGV[2] the lock token, ARGV[3] the new value. Atomically writes
/// the value iff the fence is larger than the recorded one, or equal with
/// the same token; answers {1, fence} when written, {0, recorded fence}
/// when refused as stale.
std::string_view fenced_set_script();

}  // namespace redlock
