#include "detail/client_core.hpp"

#include "detail/operations.hpp"

#include <redlock/config.hpp>
#include "detail/random.hpp"

namespace redlock::detail {
namespace {

/// Corks every connection for a scope, so what it sends leaves in one write per node.
class corked {
 public:
  explicit corked(const std::vector<std::shared_ptr<connection>>& connections)
      : connections_(connections) {
    for (const auto& c : connections_) c->cork();
  }
  ~corked() {
    for (const auto& c : connections_) c->uncork();
  }
  corked(const corked&) = delete;
  corked& operator=(const corked&) = delete;

 private:
  const std::vector<std::shared_ptr<connection>>& connections_;
};

}  // namespace

client_core::client_core(boost::asio::any_io_executor executor, client_config config)
    : strand_(boost::asio::make_strand(executor)),
      config_(checked(std::move(config))),
      id_(make_token()),
      wakeups_(strand_, config_.nodes, settings_of(config_), id_) {
  connections_.reserve(config_.nodes.size());
  for (const auto& node : config_.nodes) {
    connections_.push_back(std::make_shared<connection>(strand_, node, settings_of(config_)));
  }
}

client_config client_core::checked(client_config config) {
  const logger log(config.log);
  for (const auto& warning : validate(config)) log(log_level::warning, warning);
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

void client_core::start() {
  boost::asio::post(strand_, [self = shared_from_this()] {
    if (self->closed_) return;
    for (auto& c : self->connections_) c->start();
  });
}

void client_core::shutdown() {
  if (closed_) return;
  closed_ = true;
  // Copy: aborting may complete operations, which withdraw themselves.
  const std::vector<abortable*> running(running_.begin(), running_.end());
  for (auto* op : running) op->abort();
  for (auto& c : connections_) c->shutdown();
  wakeups_.shutdown();
}

std::string client_core::key_for(std::string_view resource) const {
  std::string key;
  key.reserve(config_.key_prefix.size() + resource.size());
  key.append(config_.key_prefix).append(resource);
  return key;
}

void client_core::acquire(std::string resource, lock_options options,
                          completion<error_code, redlock::lock> done) {
  std::make_shared<acquire_op>(shared_from_this(), std::move(resource), options, std::move(done))
      ->run();
}

void client_core::release(redlock::lock held, completion<error_code, std::size_t> done) {
  if (held.empty()) return done(errc::not_a_lock, 0);
  const auto timeout = effective_request_timeout(lock_options{.ttl = held.ttl()});
  release_op::plan how{.nodes = std::vector(size(), release_op::node_role::send_and_await),
                       .enough_removed = quorum_of(size()),
                       .announce = true};
  auto op = std::make_shared<release_op>(
      shared_from_this(), key_for(held.resource()), held.token(), timeout, std::move(how),
      [this, self = shared_from_this(), done = std::move(done)](release_op::result r) mutable {
        if (closed_) return done(boost::asio::error::operation_aborted, r.removed);
        const error_code ec =
            r.answered >= quorum_of(size()) ? error_code{} : error_code(errc::quorum_unreachable);
        done(ec, r.removed);
      });
  // Our waiters for this key need not wait for the announcement: an attempt
  // sent now follows the release on every connection. Corked, the release
  // and that attempt leave in one write per node.
  const corked batch(connections_);
  op->run();
  wakeups_.released_here(op->key());
}

void client_core::extend(redlock::lock held, milliseconds ttl,
                         completion<error_code, redlock::lock> done) {
  std::make_shared<extend_op>(shared_from_this(), std::move(held), ttl, std::move(done))->run();
}

}  // namespace redlock::detail
