#include <redlock/keeper.hpp>

#include "detail/keep_op.hpp"
#include "detail/lock_state.hpp"
#include "detail/release_op.hpp"

#include <boost/system/system_error.hpp>

namespace redlock {
namespace {
const lock no_lock;
}

keeper::keeper(client& owner, lock held, keep_options options) {
  const auto& state = detail::lock_access::state(held);
  const auto& core = owner.core_;
  error_code invalid;
  if (!state) {
    invalid = errc::not_a_lock;
  } else if (state->client != core->serial()) {
    invalid = errc::foreign_lock;
  } else {
    invalid = validate(options, held.ttl(), core->config().drift_factor);
  }
  if (invalid) throw boost::system::system_error(invalid, "redlock: keeper");
  op_ = std::make_shared<detail::keep_op>(core, std::move(held), options);
  op_->launch();
}

keeper::~keeper() { stop(); }

keeper& keeper::operator=(keeper&& other) noexcept {
  if (this != &other) {
    stop();
    op_ = std::move(other.op_);
  }
  return *this;
}

const lock& keeper::held() const noexcept { return op_ ? op_->held() : no_lock; }

bool keeper::lost() const noexcept { return op_ && op_->lost(); }

error_code keeper::lost_reason() const noexcept { return op_ ? op_->reason() : error_code{}; }

lease_token keeper::stop_token() const noexcept {
  if (!op_) return {};
  return detail::lease_access::make(op_->stop_token(), op_->lease());
}

unsigned keeper::extensions() const noexcept { return op_ ? op_->extensions() : 0; }

void keeper::stop() noexcept {
  if (op_) op_->request_stop();
}

keeper::executor_type keeper::get_executor() const {
  return op_ ? op_->core()->strand().get_inner_executor().inner() : executor_type{};
}

void keeper::start_wait(detail::completion<error_code> done) { op_->wait_lost(std::move(done)); }

std::shared_ptr<detail::pending_operation> keeper::make_release(
    detail::completion<error_code, std::size_t> done) {
  op_->request_stop();
  return std::make_shared<detail::release_op>(op_->core(), op_->held(), std::move(done));
}

}  // namespace redlock
