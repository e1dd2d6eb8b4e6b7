#include <redlock/lock.hpp>

#include "detail/lock_state.hpp"

namespace redlock {
namespace {
const std::string nothing;
const std::vector<std::string> no_resources;
}  // namespace

lock::lock(std::shared_ptr<detail::lock_state> state, std::vector<node_outcome> nodes)
    : state_(std::move(state)), nodes_(std::move(nodes)) {}

const std::string& lock::resource() const noexcept {
  return state_ ? state_->resources.front() : nothing;
}

const std::vector<std::string>& lock::resources() const noexcept {
  return state_ ? state_->resources : no_resources;
}

const std::string& lock::reentrant_owner() const noexcept {
  return state_ ? state_->keys.owner : nothing;
}

const std::string& lock::token() const noexcept { return state_ ? state_->token : nothing; }

std::chrono::milliseconds lock::ttl() const noexcept {
  return std::chrono::milliseconds(state_ ? state_->ttl_ms.load(std::memory_order_relaxed) : 0);
}

clock::time_point lock::validity_deadline() const noexcept {
  return state_ ? state_->deadline() : clock::time_point{};
}

bool lock::released() const noexcept {
  return state_ && state_->released.load(std::memory_order_acquire);
}

bool lock::valid(clock::time_point now) const noexcept {
  return state_ && !released() && now < state_->deadline();
}

std::chrono::milliseconds lock::remaining_validity(clock::time_point now) const noexcept {
  if (!valid(now)) return std::chrono::milliseconds{0};
  return std::chrono::duration_cast<std::chrono::milliseconds>(state_->deadline() - now);
}

}  // namespace redlock
