#include <redlock/lock.hpp>

#include "detail/lock_state.hpp"

#include <fmt/format.h>

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

bool lock::fenced() const noexcept { return state_ && !state_->fences.empty(); }

std::uint64_t lock::fence() const noexcept { return fenced() ? state_->fences.front() : 0; }

const std::vector<std::uint64_t>& lock::fences() const noexcept {
  static const std::vector<std::uint64_t> none;
  return state_ ? state_->fences : none;
}

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

std::string endpoint_name(const node_config& node) {
  if (node.host.find(':') != std::string::npos) return fmt::format("[{}]:{}", node.host, node.port);
  return fmt::format("{}:{}", node.host, node.port);
}

std::string describe_nodes(const std::vector<node_outcome>& outcomes,
                           const std::vector<node_config>& nodes) {
  std::string out;
  for (std::size_t i = 0; i < outcomes.size() && i < nodes.size(); ++i) {
    const auto& o = outcomes[i];
    std::string why;
    switch (o.state) {
      case node_outcome::status::acquired:
        continue;
      case node_outcome::status::pending:
        why = "no answer yet";
        break;
      case node_outcome::status::held_elsewhere:
        why = "held elsewhere";
        break;
      case node_outcome::status::failed:
        why = o.error ? o.error.message() : std::string("failed");
        break;
    }
    if (!out.empty()) out += "; ";
    out += fmt::format("{}: {}", endpoint_name(nodes[i]), why);
  }
  return out;
}

std::string describe_failure(error_code ec, const lock& failed,
                             const std::vector<node_config>& nodes) {
  auto text = ec.message();
  const auto which = describe_nodes(failed.nodes(), nodes);
  if (!which.empty()) text += fmt::format(" ({})", which);
  return text;
}

}  // namespace redlock
