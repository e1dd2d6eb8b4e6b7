// Extensions of many plain single-key locks sent together: one extend_many
// script call per node carries up to keys_per_call locks, and each lock's
// answer is handed back as if it had been sent alone. The keep schedule
// fills one batch per round of due keepers.
#pragma once

#include "detail/reply.hpp"
#include "detail/timer.hpp"

#include <redlock/clock.hpp>
#include <redlock/error.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

class node_pool;

/// One lock's extension in a batch: gets that lock's answer from each node.
class batched_extension {
 public:
  /// Node `node`'s answer, read at `now`: an integer reply (1 extended, 0
  /// not ours), or the failure of the whole call (`ec`, or the node's error
  /// reply, or a reply that is no answer to the call). Once per node.
  virtual void on_batched_reply(std::size_t node, error_code ec, const reply& r,
                                clock::time_point now) = 0;
  /// Its request timeout (the expiry given to add()) passed at `now` with
  /// some node still to answer. Maybe after the extension completed.
  virtual void on_batch_timeout(clock::time_point now) = 0;

 protected:
  ~batched_extension() = default;
};

class extension_batch {
 public:
  /// Locks per script call: a call blocks its node while it runs (each key
  /// is a GET, a PTTL and maybe a PEXPIRE), so other clients' commands wait
  /// at most this many keys' work behind it.
  static constexpr std::size_t keys_per_call = 128;

  /// Adds one lock's extension: `key` made to live `key_ttl` if it holds
  /// `token`, timed out at `expiry`. `key` and `token` must live as long as
  /// `extension` (they are the lock's own, which the extension holds).
  void add(std::string_view key, std::string_view token, std::chrono::milliseconds key_ttl,
           clock::time_point expiry, std::shared_ptr<batched_extension> extension);
  /// Sends what was added to every node (keys_per_call locks per call) and
  /// empties the batch. Each call has one timer on `strand` for its locks'
  /// expiries, rather than a timer per lock.
  void flush(node_pool& pool, const strand_type& strand);
  /// `report` gets each node's round trip for each call it answers.
  void report_round_trips(std::function<void(clock::duration)> report) {
    round_trips_ = std::make_shared<const std::function<void(clock::duration)>>(std::move(report));
  }
  bool empty() const noexcept { return entries_.empty(); }
  std::size_t size() const noexcept { return entries_.size(); }

  struct entry {
    std::string_view key;
    std::string_view token;
    std::string key_ttl_ms;
    clock::time_point expiry;
    std::shared_ptr<batched_extension> extension;
  };

 private:
  std::vector<entry> entries_;
  std::shared_ptr<const std::function<void(clock::duration)>> round_trips_;
};

/// The extend_many call for `entries`.
std::string extend_many_command(const std::vector<extension_batch::entry>& entries);

/// A well-formed answer to an extend_many call of `count` keys: a string of
/// `count` characters, each '0' or '1'.
bool is_batch_answer(const reply& r, std::size_t count) noexcept;

/// Lock `i`'s answer within a well-formed batch answer, as the integer reply
/// its own extend script would have given.
reply answer_of(const reply& batch, std::size_t i) noexcept;

/// The earliest expiry after `now` among `entries`; max() when none.
clock::time_point next_expiry(const std::vector<extension_batch::entry>& entries,
                              clock::time_point now) noexcept;

}  // namespace redlock::detail
