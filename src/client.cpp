#include <redlock/client.hpp>

#include "detail/acquire_op.hpp"
#include "detail/extend_op.hpp"
#include "detail/node_set.hpp"
#include "detail/quorum_fsm.hpp"
#include "detail/release_op.hpp"

namespace redlock {

client::client(executor_type executor, client_config config)
    : executor_(std::move(executor)),
      nodes_(std::make_shared<detail::node_set>(executor_, std::move(config))) {
  nodes_->start(nodes_);
}

client::~client() { close(); }

void client::close() {
  boost::asio::post(nodes_->strand(), [nodes = nodes_] { nodes->shutdown(); });
}

const client_config& client::config() const noexcept { return nodes_->config(); }

std::size_t client::quorum() const noexcept { return detail::quorum_of(nodes_->size()); }

// Operations are built here, on the caller's thread, and only start (on the
// strand, through post) when launched: a handler is never called from inside
// the initiating function.

client::pending client::make_acquire(std::vector<std::string> resources, lock_options options,
                                     detail::completion<error_code, lock> done) {
  return std::make_shared<detail::acquire_op>(nodes_, std::move(resources), std::move(options),
                                              std::move(done));
}

client::pending client::make_release(lock held, detail::completion<error_code, std::size_t> done) {
  return std::make_shared<detail::release_op>(nodes_, std::move(held), std::move(done));
}

client::pending client::make_extend(lock held, milliseconds ttl,
                                    detail::completion<error_code, lock> done) {
  return std::make_shared<detail::extend_op>(nodes_, std::move(held), ttl, std::move(done));
}

}  // namespace redlock
