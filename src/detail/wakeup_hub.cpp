#include "detail/wakeup_hub.hpp"
#include "detail/commands.hpp"

#include <boost/asio/post.hpp>

#include <utility>

namespace redlock::detail {

void wakeup::start() {
  if (!wake_) return;
  auto wake = std::move(wake_);
  wake(why_);
  hub_->settle(channel_);
}

wakeup_hub::wakeup_hub(strand_type strand, const std::vector<node_config>& nodes,
                       connection_settings settings, std::string self)
    : strand_(std::move(strand)),
      nodes_(nodes),
      settings_(std::move(settings)),
      self_(std::move(self)) {}

void wakeup_hub::start_subscribers() {
  for (const auto& node : nodes_) {
    auto subscriber = std::make_shared<subscriber_connection>(strand_, node, settings_);
    subscriber->on_push(
        [this](std::string_view kind, std::string_view channel, std::string_view payload) {
          if (kind == "message" && payload != self_) announced(channel);
        });
    // (Re)subscribe whenever the connection comes up: a reconnect forgets subscriptions.
    subscriber->on_ready([this, raw = subscriber.get()] { subscribe_all(*raw); });
    subscriber->start();
    subscribers_.push_back(std::move(subscriber));
  }
}

wakeup_hub::waiter_id wakeup_hub::wait(const std::string& key, std::uint64_t ticket,
                                       waiter_line::wake_function wake) {
  if (subscribers_.empty()) start_subscribers();
  auto channel = release_channel(key);
  const auto joined = line_.join(channel, ticket, std::move(wake));
  if (joined.first) send_to_all(format_command({"SUBSCRIBE", channel}));
  return joined.id;
}

void wakeup_hub::cancel(waiter_id id) {
  if (auto idle = line_.leave(id)) {
    holders_.erase(*idle);
    send_to_all(format_command({"UNSUBSCRIBE", *idle}));
  }
}

void wakeup_hub::acquired_here(const std::shared_ptr<lock_state>& lock) {
  if (line_.nobody_waits()) return;  // the common case
  for (const auto& key : lock->keys.keys) {
    auto channel = release_channel(key);
    if (line_.waited_on(channel)) holders_[std::move(channel)] = {lock, false};
  }
}

clock::time_point wakeup_hub::held_here_until(const std::string& key, std::string_view owner,
                                              clock::time_point now) {
  constexpr auto none = clock::time_point::min();
  if (holders_.empty()) return none;
  const auto found = holders_.find(release_channel(key));
  if (found == holders_.end()) return none;
  if (std::exchange(found->second.ask_nodes, false)) return none;
  const auto lock = found->second.lock.lock();
  if (!lock || lock->released.load(std::memory_order_acquire) ||
      lock->found_lost.load(std::memory_order_acquire)) {
    holders_.erase(found);
    return none;
  }
  // The same reentrant owner's acquire is granted beside it.
  if (!owner.empty() && lock->keys.owner == owner) return none;
  const auto until = lock->deadline();
  return until > now ? until : none;
}

wakeup wakeup_hub::released_here(const std::string& key) {
  line_.note_release_here(key);
  if (line_.nobody_waits()) return {};  // the common case
  auto channel = release_channel(key);
  // Released through any handle (an adopted one too): not held here now.
  holders_.erase(channel);
  // A delivery still posted would wake the same first waiter.
  posted_.erase(channel);
  return take_first(channel, wake_reason::released_here);
}

wakeup wakeup_hub::pass_on(const std::string& key, wake_reason why) {
  if (line_.nobody_waits()) return {};
  return take_first(release_channel(key), why);
}

wakeup wakeup_hub::take_first(const std::string& channel, wake_reason why) {
  auto wake = line_.take_first(channel);
  if (!wake) return {};
  return {this, channel, std::move(wake), why};
}

void wakeup_hub::announced(std::string_view channel) {
  std::string name(channel);
  // Another client released the key: the release of the lock before ours
  // (its messages from the slower nodes come after our lock was granted),
  // or of ours through a handle adopted elsewhere, or ours was lost. The
  // next look-up asks the nodes once to tell.
  if (const auto found = holders_.find(name); found != holders_.end()) {
    found->second.ask_nodes = true;
  }
  if (!line_.waited_on(name) || posted_.contains(name)) return;
  const auto number = ++deliveries_;
  posted_.emplace(name, number);
  boost::asio::post(strand_, [this, owner = owner_, name = std::move(name), number] {
    // Held for the call: the wake-up may drop the last other owner.
    if (const auto alive = owner.lock()) deliver(name, number);
  });
}

void wakeup_hub::deliver(const std::string& channel, std::uint64_t number) {
  const auto found = posted_.find(channel);
  if (found == posted_.end() || found->second != number) return;
  posted_.erase(found);
  take_first(channel, wake_reason::announced).start();
}

void wakeup_hub::settle(const std::string& channel) {
  // The subscription stays while anyone waits, the woken one included if it
  // waits again.
  if (line_.forget_if_idle(channel)) {
    holders_.erase(channel);
    send_to_all(format_command({"UNSUBSCRIBE", channel}));
  }
}

void wakeup_hub::subscribe_all(subscriber_connection& node) {
  for (const auto& channel : line_.channels()) {
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
  posted_.clear();
  holders_.clear();
  line_.clear();
  for (auto& subscriber : subscribers_) subscriber->abandon();
}

void wakeup_hub::close() {
  posted_.clear();
  holders_.clear();
  line_.clear();
  for (auto& subscriber : subscribers_) subscriber->close();
}

}  // namespace redlock::detail
