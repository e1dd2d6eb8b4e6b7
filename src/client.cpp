#include <redlock/client.hpp>

#include "detail/acquire_op.hpp"
#include "detail/client_core.hpp"
#include "detail/extend_op.hpp"
#include "detail/quorum_fsm.hpp"
#include "detail/release_op.hpp"
#include "detail/status_op.hpp"
#include "detail/teardown_service.hpp"

#include <boost/system/system_error.hpp>

namespace redlock {

client::client(executor_type executor, client_config config)
    : executor_(std::move(executor)),
      core_(std::make_shared<detail::client_core>(executor_, std::move(config))) {
  // Should the context be destroyed without running the close our
  // destruction posts, its shutdown lets go of what our queued callbacks hold.
  auto& context = boost::asio::query(
      executor_, boost::asio::execution::context_as<boost::asio::execution_context&>);
  boost::asio::use_service<detail::teardown_service>(context).watch(core_);
  core_->start(core_);
}

client::~client() { close(); }

void client::close() {
  boost::asio::post(core_->strand(), [core = core_] { core->close(); });
}

const client_config& client::config() const noexcept { return core_->config(); }

std::size_t client::quorum() const noexcept { return detail::quorum_of(core_->size()); }

// Operations are built here, on the caller's thread, and only start (on the
// strand, through post) when launched: a handler is never called from inside
// the initiating function.

client::pending client::make_acquire(std::vector<std::string> resources, lock_options options,
                                     detail::completion<error_code, lock> done) {
  return std::make_shared<detail::acquire_op>(core_, std::move(resources), std::move(options),
                                              std::move(done));
}

client::pending client::make_release(lock held, detail::completion<error_code, std::size_t> done) {
  return std::make_shared<detail::release_op>(core_, std::move(held), std::move(done));
}

client::pending client::make_extend(lock held, milliseconds ttl,
                                    detail::completion<error_code, lock> done) {
  return std::make_shared<detail::extend_op>(core_, std::move(held), ttl, std::move(done));
}

client::pending client::make_status(std::string resource, milliseconds timeout,
                                    detail::completion<error_code, resource_status> done) {
  return std::make_shared<detail::status_op>(core_, std::move(resource), timeout, std::move(done));
}

lock client::adopt(std::string resource, std::string token, const lock_options& options) const {
  if (token.empty()) throw boost::system::system_error(errc::empty_token);
  std::vector<std::string> resources{std::move(resource)};
  if (auto invalid = validate(resources, options, core_->config().drift_factor)) {
    throw boost::system::system_error(invalid);
  }
  auto keys = core_->keys_for(resources, options.reentrant_owner);
  // Its deadline is now and unknown: valid() is false until an extend lands.
  auto state = std::make_shared<detail::lock_state>(
      core_->serial(), std::move(resources), std::move(keys), std::move(token), options.ttl,
      options.request_timeout, clock::now(), 0, false, options.lock_delay);
  return detail::lock_access::make(std::move(state), std::vector<node_outcome>(core_->size()));
}

}  // namespace redlock
