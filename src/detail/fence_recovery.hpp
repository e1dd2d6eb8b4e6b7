// Recovery of a node that lost its fencing state (docs/fencing.md, "Counter
// loss"): the decisions, without I/O. A node answering "lost <id>" is left
// out of fenced acquires; once every fenced acquire that may have counted
// its answers from before the loss has ended (the wait, counted from when
// this client first saw that loss id), it is re-seeded from the largest
// `max` of the other nodes, if enough of them are valid.
#pragma once

#include <redlock/clock.hpp>
#include <redlock/config.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

/// One other node's fencing state, as fence_state_script() answered.
struct fence_reading {
  bool answered = false;
  bool valid = false;
  std::uint64_t max = 0;
  std::string loss_id;  ///< Of a node not valid; empty when it records none.
};

/// Parses "<valid> <max> <loss id or ->"; nullopt when it is not that.
std::optional<fence_reading> parse_fence_reading(std::string_view text);

/// The floor to re-seed a lost node with, given the other nodes' readings
/// (`nodes` in all, the lost one included): the largest max read, when
/// every other node answered (valid or not; nodes that never had state
/// start this way) or at least a quorum of the others answered valid;
/// nullopt when neither holds (try again later).
std::optional<std::uint64_t> reseed_floor(std::span<const fence_reading> others, std::size_t nodes);

/// The readings were taken one after another, not at one moment: when the
/// floor comes from every other node's answer (not from a quorum of valid
/// ones) and some of them were not valid, those must be read again, and
/// re-seeding goes on only if each is still lost with the same id
/// (still_lost). Then there was a moment, the end of the first reads, when
/// all of them were without their state at once, as the rule assumes.
bool needs_confirmation(std::span<const fence_reading> others, std::size_t nodes);
/// `again` shows the node still lost by the loss `first` saw.
bool still_lost(const fence_reading& first, const fence_reading& again);

/// How long after a loss is first seen the node may be re-seeded: the
/// longest fenced acquire (max_fenced_ttl, stretched by the drift factor)
/// plus a request timeout, so every acquire that counted its old answers
/// has ended.
clock::duration reseed_wait(std::chrono::milliseconds max_fenced_ttl, double drift_factor,
                            std::chrono::milliseconds request_timeout);

/// Which losses this client has seen, and when a re-seed may start.
class loss_watch {
 public:
  loss_watch(std::size_t nodes, clock::duration wait);

  /// Node `node` answered "lost <id>" at `now`. True when a re-seed of it
  /// should start now: the wait since `id` was first seen is over and none
  /// is running.
  bool seen(std::size_t node, std::string_view id, clock::time_point now);
  /// The re-seed of `node` for `id` ended (done or not): another may start
  /// when the loss is seen again.
  void ended(std::size_t node, std::string_view id);

 private:
  struct loss {
    std::string id;
    clock::time_point first_seen{};
    bool reseeding = false;
  };
  std::vector<loss> losses_;
  clock::duration wait_;
};

}  // namespace redlock::detail
