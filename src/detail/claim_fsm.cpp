#include "detail/claim_fsm.hpp"

#include <boost/asio/error.hpp>

#include <chrono>

namespace redlock::detail {

using action = claim_fsm::step::action;

bool retryable_claim_error(error_code ec) noexcept {
  return ec == errc::quorum_unreachable || ec == errc::validity_expired;
}

claim_fsm::claim_fsm(wall_clock::time_point closes, milliseconds retry_spread) noexcept
    : closes_(closes), retry_spread_(retry_spread) {}

claim_fsm::step claim_fsm::start(wall_clock::time_point now) {
  if (now > closes_) return {action::finish, {}, claim_outcome::missed, {}};
  return attempt();
}

claim_fsm::step claim_fsm::attempt() {
  ++attempts_;
  return {action::attempt, {}, {}, {}};
}

claim_fsm::step claim_fsm::on_attempt(error_code ec, wall_clock::time_point now,
                                      double unit_random) {
  if (!ec) return {action::finish, {}, claim_outcome::claimed, {}};
  // Refused by a majority: held elsewhere, or the votes split. Only the
  // holders' tokens tell (with 5 nodes, 2/2/1 splits refuse everyone).
  if (ec == errc::not_acquired) return {action::read_status, {}, {}, {}};
  if (!retryable_claim_error(ec)) return {action::finish, {}, claim_outcome::failed, ec};
  last_error_ = ec;
  return retry_or_finish(now, unit_random);
}

claim_fsm::step claim_fsm::on_status(error_code ec, const resource_status& status,
                                     wall_clock::time_point now, double unit_random) {
  if (status.quorum_holder) return {action::finish, {}, claim_outcome::claimed_elsewhere, {}};
  if (ec == boost::asio::error::operation_aborted) {
    return {action::finish, {}, claim_outcome::failed, ec};
  }
  // No majority answered: whether someone holds the claim is unknown, and
  // the next attempt will find out.
  last_error_ = ec ? ec : make_error_code(errc::not_acquired);
  return retry_or_finish(now, unit_random);
}

claim_fsm::step claim_fsm::on_wake(wall_clock::time_point now) {
  if (now > closes_) return give_up();
  return attempt();
}

claim_fsm::step claim_fsm::retry_or_finish(wall_clock::time_point now, double unit_random) {
  const auto delay = std::chrono::duration_cast<wall_clock::duration>(
      std::chrono::duration<double, std::milli>(retry_spread_) * unit_random);
  const auto at = now + delay;
  // Not squeezed in before the window closes: every contender doing so
  // would collide there again.
  if (at > closes_) return give_up();
  return {action::wait, at, {}, {}};
}

claim_fsm::step claim_fsm::give_up() const {
  if (last_error_ == errc::not_acquired) return {action::finish, {}, claim_outcome::contended, {}};
  return {action::finish, {}, claim_outcome::failed, last_error_};
}

}  // namespace redlock::detail
