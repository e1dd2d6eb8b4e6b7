#include <redlock/client.hpp>

#include "detail/client_core.hpp"

#include "detail/quorum_fsm.hpp"

namespace redlock {

client::client(executor_type executor, client_config config)
    : executor_(std::move(executor)),
      core_(std::make_shared<detail::client_core>(executor_, std::move(config))) {
  core_->start();
}

client::~client() { close(); }

void client::close() {
  boost::asio::post(core_->strand(), [core = core_] { core->shutdown(); });
}

const client_config& client::config() const noexcept { return core_->config(); }

std::size_t client::quorum() const noexcept { return detail::quorum_of(core_->size()); }

// The start_* functions get onto the strand with post, never dispatch, so a
// handler is never called from inside the initiating function.

void client::start_acquire(std::string resource, lock_options options,
                        detail::completion<error_code, lock> done) {
  boost::asio::post(core_->strand(), [core = core_, resource = std::move(resource), options,
                                      done = std::move(done)]() mutable {
    core->acquire(std::move(resource), options, std::move(done));
  });
}

void client::start_release(lock held, detail::completion<error_code, std::size_t> done) {
  boost::asio::post(core_->strand(),
                    [core = core_, held = std::move(held), done = std::move(done)]() mutable {
                      core->release(std::move(held), std::move(done));
                    });
}

void client::start_extend(lock held, milliseconds ttl, detail::completion<error_code, lock> done) {
  boost::asio::post(core_->strand(),
                    [core = core_, held = std::move(held), ttl, done = std::move(done)]() mutable {
                      core->extend(std::move(held), ttl, std::move(done));
                    });
}

}  // namespace redlock
