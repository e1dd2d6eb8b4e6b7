#include "detail/fence_recovery.hpp"

#include "detail/quorum_fsm.hpp"

#include <algorithm>
#include <charconv>

namespace redlock::detail {

std::optional<fence_reading> parse_fence_reading(std::string_view text) {
  if (text.size() < 5 || (text[0] != '0' && text[0] != '1') || text[1] != ' ') return {};
  fence_reading reading;
  reading.answered = true;
  reading.valid = text[0] == '1';
  const auto rest = text.substr(2);
  const auto [end, parsed] = std::from_chars(rest.data(), rest.data() + rest.size(), reading.max);
  if (parsed != std::errc() || end == rest.data() + rest.size() || *end != ' ') return {};
  const auto id = rest.substr(static_cast<std::size_t>(end - rest.data()) + 1);
  if (id.empty()) return {};
  if (id != "-") reading.loss_id = std::string(id);
  return reading;
}

std::optional<std::uint64_t> reseed_floor(std::span<const fence_reading> others,
                                          std::size_t nodes) {
  std::size_t valid = 0;
  std::size_t answered = 0;
  std::uint64_t top = 0;
  for (const auto& reading : others) {
    if (!reading.answered) continue;
    ++answered;
    if (reading.valid) ++valid;
    top = std::max(top, reading.max);
  }
  // Every other node answered: under the assumption that at most a minority
  // is without its state at a time, every completed acquire's majority
  // (less this node) has a node among them that kept its fence. This also
  // starts nodes that never had any state (all 0).
  if (answered == others.size()) return top;
  // Some did not: a quorum of the others valid still meets every such
  // majority in a node that holds its fence.
  if (valid >= quorum_of(nodes)) return top;
  return std::nullopt;
}

bool needs_confirmation(std::span<const fence_reading> others, std::size_t nodes) {
  const auto valid = static_cast<std::size_t>(
      std::count_if(others.begin(), others.end(), [](const auto& r) { return r.valid; }));
  return valid < quorum_of(nodes) && valid < others.size();
}

bool still_lost(const fence_reading& first, const fence_reading& again) {
  return !first.loss_id.empty() && again.answered && !again.valid && again.loss_id == first.loss_id;
}

clock::duration reseed_wait(std::chrono::milliseconds max_fenced_ttl, double drift_factor,
                            std::chrono::milliseconds request_timeout) {
  // No fenced acquire's TTL exceeds max_duration (validate refuses it), and
  // a larger value would not fit the clock's nanoseconds.
  max_fenced_ttl = std::clamp(max_fenced_ttl, std::chrono::milliseconds::zero(), max_duration);
  request_timeout = std::clamp(request_timeout, std::chrono::milliseconds::zero(), max_duration);
  return max_fenced_ttl + drift_allowance(max_fenced_ttl, drift_factor) + request_timeout;
}

loss_watch::loss_watch(std::size_t nodes, clock::duration wait) : losses_(nodes), wait_(wait) {}

bool loss_watch::seen(std::size_t node, std::string_view id, clock::time_point now) {
  auto& loss = losses_.at(node);
  if (loss.id != id) {
    // Another loss (or the first): its own wait starts now.
    loss = {std::string(id), now, false};
  }
  if (loss.reseeding || now < loss.first_seen + wait_) return false;
  loss.reseeding = true;
  return true;
}

void loss_watch::ended(std::size_t node, std::string_view id) {
  auto& loss = losses_.at(node);
  if (loss.id == id) loss.reseeding = false;
}

}  // namespace redlock::detail
