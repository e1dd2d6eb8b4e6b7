#include "detail/wakeup_hub.hpp"
#include "detail/commands.hpp"

#include <algorithm>
#include <functional>

namespace redlock::detail {

wakeup_hub::wakeup_hub(strand_type strand, const std::vector<node_config>& nodes,
                       connection_settings settings, std::string self)
    : strand_(std::move(strand)),
      nodes_(nodes),
      settings_(std::move(settings)),
      self_(std::move(self)) {
  settings_.subscriber = true;
}

wakeup_hub::waiter_id wakeup_hub::wait(const std::string& key, std::uint64_t ticket,
                                       unique_function<void(wake_reason)> wake) {
  if (subscribers_.empty()) {
    for (const auto& node : nodes_) {
      auto subscriber = std::make_shared<connection>(strand_, node, settings_);
      subscriber->on_push(
          [this](std::string_view kind, std::string_view channel, std::string_view payload) {
            if (kind == "message" && payload != self_) on_message(channel, wake_reason::announced);
          });
      // (Re)subscribe whenever the connection comes up: a reconnect forgets subscriptions.
      subscriber->on_ready([this, raw = subscriber.get()] { subscribe_all(*raw); });
      subscriber->start();
      subscribers_.push_back(std::move(subscriber));
    }
  }
  const auto id = next_id_++;
  auto channel = release_channel(key);
  const bool first = !waiters_.contains(channel);
  auto& waiting = waiters_[channel];
  const auto place =
      std::upper_bound(waiting.begin(), waiting.end(), ticket,
                       [](std::uint64_t t, const waiter& w) { return t < w.ticket; });
  waiting.insert(place, {id, ticket, std::move(wake)});
  channel_of_.emplace(id, channel);
  if (first) send_to_all(format_command({"SUBSCRIBE", channel}));
  return id;
}

void wakeup_hub::cancel(waiter_id id) {
  const auto found = channel_of_.find(id);
  if (found == channel_of_.end()) return;
  const auto channel = std::move(found->second);
  channel_of_.erase(found);
  auto& waiting = waiters_[channel];
  std::erase_if(waiting, [id](const waiter& w) { return w.id == id; });
  if (waiting.empty()) drop_key(channel);
}

void wakeup_hub::released_here(const std::string& key) {
  ++releases_here_;
  recent_[releases_here_ % recent_.size()] = {releases_here_, std::hash<std::string_view>{}(key)};
  if (waiters_.empty()) return;  // the common case: nobody waits for anything
  on_message(release_channel(key), wake_reason::released_here);
}

void wakeup_hub::pass_on(const std::string& key, wake_reason why) {
  if (!waiters_.empty()) on_message(release_channel(key), why);
}

bool wakeup_hub::released_here_since(std::string_view key, std::uint64_t since) const noexcept {
  const auto hash = std::hash<std::string_view>{}(key);
  for (const auto& r : recent_) {
    if (r.number > since && r.key_hash == hash) return true;
  }
  return false;
}

void wakeup_hub::on_message(std::string_view channel, wake_reason why) {
  const auto found = waiters_.find(std::string(channel));
  if (found == waiters_.end() || found->second.empty()) return;
  const std::string name = found->first;
  auto first = std::move(found->second.front());
  found->second.erase(found->second.begin());
  channel_of_.erase(first.id);
  first.wake(why);
  // The subscription stays while anyone waits, the woken one included if it
  // waits again.
  const auto still = waiters_.find(name);
  if (still != waiters_.end() && still->second.empty()) drop_key(name);
}

void wakeup_hub::drop_key(const std::string& channel) {
  send_to_all(format_command({"UNSUBSCRIBE", channel}));
  waiters_.erase(channel);
}

void wakeup_hub::subscribe_all(connection& node) {
  for (const auto& [channel, waiting] : waiters_) {
    node.send_unanswered(format_command({"SUBSCRIBE", channel}));
  }
}

void wakeup_hub::send_to_all(const std::string& command) {
  // A subscriber that is not up yet subscribes to everything once it is.
  for (auto& subscriber : subscribers_) {
    if (subscriber->ready()) subscriber->send_unanswered(command);
  }
}

void wakeup_hub::abandon() noexcept {
  auto waiters = std::move(waiters_);
  waiters_.clear();
  channel_of_.clear();
  for (auto& subscriber : subscribers_) subscriber->abandon();
}

void wakeup_hub::shutdown() {
  waiters_.clear();
  channel_of_.clear();
  for (auto& subscriber : subscribers_) subscriber->shutdown();
}

}  // namespace redlock::detail
