#include "detail/waiter_line.hpp"

#include <algorithm>
#include <functional>

namespace redlock::detail {

waiter_line::joined waiter_line::join(const std::string& channel, std::uint64_t ticket,
                                      wake_function wake) {
  const auto id = next_id_++;
  const auto [found, first] = waiting_.try_emplace(channel);
  auto& waiting = found->second;
  const auto place =
      std::upper_bound(waiting.begin(), waiting.end(), ticket,
                       [](std::uint64_t t, const waiter& w) { return t < w.ticket; });
  waiting.insert(place, {id, ticket, std::move(wake)});
  channel_of_.emplace(id, channel);
  return {id, first};
}

std::optional<std::string> waiter_line::leave(waiter_id id) {
  const auto found = channel_of_.find(id);
  if (found == channel_of_.end()) return std::nullopt;
  auto channel = std::move(found->second);
  channel_of_.erase(found);
  std::erase_if(waiting_[channel], [id](const waiter& w) { return w.id == id; });
  if (!forget_if_idle(channel)) return std::nullopt;
  return channel;
}

waiter_line::wake_function waiter_line::take_first(const std::string& channel) {
  const auto found = waiting_.find(channel);
  if (found == waiting_.end() || found->second.empty()) return {};
  auto first = std::move(found->second.front());
  found->second.erase(found->second.begin());
  channel_of_.erase(first.id);
  return std::move(first.wake);
}

bool waiter_line::forget_if_idle(const std::string& channel) {
  const auto found = waiting_.find(channel);
  if (found == waiting_.end() || !found->second.empty()) return false;
  waiting_.erase(found);
  return true;
}

bool waiter_line::waited_on(const std::string& channel) const {
  const auto found = waiting_.find(channel);
  return found != waiting_.end() && !found->second.empty();
}

std::vector<std::string> waiter_line::channels() const {
  std::vector<std::string> known;
  known.reserve(waiting_.size());
  for (const auto& entry : waiting_) known.push_back(entry.first);
  return known;
}

void waiter_line::clear() noexcept {
  // Freed last: a waiter may own what owns this line.
  auto dropped = std::move(waiting_);
  waiting_.clear();
  channel_of_.clear();
}

void waiter_line::note_release_here(std::string_view key) noexcept {
  ++releases_here_;
  recent_[releases_here_ % recent_.size()] = {releases_here_, std::hash<std::string_view>{}(key)};
}

bool waiter_line::released_here_since(std::string_view key, std::uint64_t since) const noexcept {
  const auto hash = std::hash<std::string_view>{}(key);
  return std::any_of(recent_.begin(), recent_.end(), [&](const recent_release& r) {
    return r.number > since && r.key_hash == hash;
  });
}

}  // namespace redlock::detail
