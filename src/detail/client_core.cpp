#include "detail/client_core.hpp"

#include "detail/logger.hpp"
#include "detail/random.hpp"
#include "detail/reseed_op.hpp"
#include "detail/server_registry.hpp"

#include <fmt/format.h>

#include <atomic>

namespace redlock::detail {
namespace {

std::uint64_t next_serial() noexcept {
  static std::atomic<std::uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace

client_core::client_core(boost::asio::any_io_executor executor, client_config config)
    : strand_(make_core_strand(std::move(executor))),
      config_(checked(std::move(config))),
      id_(make_token()),
      serial_(next_serial()),
      pool_(strand_, config_.nodes,
            [this, servers = std::make_shared<server_registry>(config_.nodes.size())](
                std::size_t i) { return node_settings(i, servers); }),
      wakeups_(strand_, config_.nodes, settings_of(config_), id_),
      keepers_(strand_, pool_),
      deadlines_(strand_),
      log_(config_.log),
      losses_(config_.nodes.size(),
              reseed_wait(config_.max_fenced_ttl, config_.drift_factor, fence_request_timeout())) {}

connection_settings client_core::node_settings(
    std::size_t node, const std::shared_ptr<server_registry>& servers) const {
  auto settings = settings_of(config_);
  settings.check_topology = true;
  settings.warn_without_aof = config_.warn_without_aof;
  settings.on_risk = config_.on_risk;
  settings.servers = servers;
  settings.node_index = node;
  settings.watcher = config_.observer.get();
  return settings;
}

void client_core::abandon() noexcept {
  closed_ = true;
  pool_.abandon();
  wakeups_.abandon();
  deadlines_.abandon();
}

client_config client_core::checked(client_config config) {
  const logger log(config.log);
  for (const auto& warning : validate(config)) log(log_level::warning, warning);
  for (auto& node : config.nodes) {
    node.tls = effective_tls(config, node);
    if (node.tls.enabled && !node.tls.verify) {
      log(log_level::warning,
          fmt::format("node {}:{}: TLS without certificate verification: anyone on the "
                      "path can pose as the node",
                      node.host, node.port));
    }
  }
  return config;
}

connection_settings client_core::settings_of(const client_config& config) {
  connection_settings settings;
  settings.connect_timeout = config.connect_timeout;
  settings.stall_timeout = config.stall_timeout;
  settings.reconnect = config.reconnect;
  settings.log = logger(config.log);
  return settings;
}

void client_core::start(const std::shared_ptr<client_core>& self) {
  wakeups_.keep_alive_with(self);
  deadlines_.keep_alive_with(self);
  boost::asio::post(strand_, [self] {
    if (self->closed_) return;
    self->pool_.start();
  });
}

void client_core::close() {
  if (closed_) return;
  closed_ = true;
  // Copy: told the client closed, operations complete and withdraw.
  std::vector<registered_operation*> running;
  for (auto& op : running_) running.push_back(&op);
  for (auto* op : running) op->client_closed();
  keepers_.close();
  pool_.close();
  wakeups_.close();
  deadlines_.close();
}

std::chrono::milliseconds client_core::fence_request_timeout() const {
  lock_options longest;
  longest.ttl = config_.max_fenced_ttl;
  return effective_request_timeout(longest);
}

void client_core::fence_loss_seen(const std::shared_ptr<client_core>& self, std::size_t node,
                                  std::string_view id) {
  if (closed_ || !losses_.seen(node, id, clock::now())) return;
  std::make_shared<reseed_op>(self, node, std::string(id), fence_request_timeout())->run();
}

void client_core::enroll(registered_operation* op) noexcept { running_.push_front(*op); }

void client_core::withdraw(registered_operation* op) noexcept { op->unlink(); }

void client_core::watch(const lock_state* lock, registered_operation* watcher) {
  watchers_.emplace(lock, watcher);
}

void client_core::unwatch(const lock_state* lock, registered_operation* watcher) noexcept {
  const auto [first, last] = watchers_.equal_range(lock);
  for (auto it = first; it != last; ++it) {
    if (it->second == watcher) {
      watchers_.erase(it);
      return;
    }
  }
}

void client_core::lock_changed(const lock_state* lock) {
  const auto [first, last] = watchers_.equal_range(lock);
  if (first == last) return;  // every release passes here: no allocation then
  // Copied: a watcher may unwatch while it is told.
  std::vector<registered_operation*> told;
  for (auto it = first; it != last; ++it) told.push_back(it->second);
  for (auto* watcher : told) watcher->lock_changed();
}

std::string client_core::key_for(std::string_view resource) const {
  std::string key;
  key.reserve(config_.key_prefix.size() + resource.size());
  key.append(config_.key_prefix).append(resource);
  return key;
}

held_keys client_core::keys_for(const std::vector<std::string>& resources,
                                std::string owner) const {
  held_keys held;
  held.keys.reserve(resources.size());
  for (const auto& resource : resources) held.keys.push_back(key_for(resource));
  held.owner = std::move(owner);
  return held;
}

}  // namespace redlock::detail
