#include "detail/claim_op.hpp"

#include "detail/claim_fsm.hpp"
#include "detail/random.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <memory>
#include <optional>
#include <stop_token>

namespace redlock::detail {

namespace {

class claim_op : public std::enable_shared_from_this<claim_op> {
 public:
  claim_op(client& owner, claim_request request, completion<error_code, due_claim> done)
      : owner_(owner),
        request_(std::move(request)),
        done_(std::move(done)),
        strand_(boost::asio::make_strand(owner.get_executor())),
        timer_(strand_),
        fsm_(request_.window.closes, effective_request_timeout(request_.lock)) {}

  void launch() {
    boost::asio::post(strand_, [self = shared_from_this()] {
      // A stop ends a wait between attempts at once.
      self->on_stop_.emplace(self->request_.lock.stop, [weak = self->weak_from_this()] {
        if (auto alive = weak.lock()) {
          boost::asio::post(alive->strand_, [alive] { alive->timer_.cancel(); });
        }
      });
      self->act(self->fsm_.start(self->now()));
    });
  }

 private:
  using action = claim_fsm::step::action;

  wall_clock::time_point now() const { return wall_clock::now() + request_.clock_offset; }

  void act(const claim_fsm::step& step) {
    // Stopped: the client may be gone, so it is not touched again.
    if (step.what != action::finish && request_.lock.stop.stop_requested()) {
      return finish(claim_outcome::failed, boost::asio::error::operation_aborted);
    }
    switch (step.what) {
      case action::attempt:
        return owner_.async_acquire(
            request_.resource, request_.lock,
            boost::asio::bind_executor(
                strand_, [self = shared_from_this()](error_code ec, lock claimed) {
                  if (!ec) self->claim_ = std::move(claimed);
                  self->act(self->fsm_.on_attempt(ec, self->now(), unit_random()));
                }));
      case action::read_status:
        return owner_.async_status(
            request_.resource, effective_request_timeout(request_.lock),
            boost::asio::bind_executor(
                strand_, [self = shared_from_this()](error_code ec, resource_status status) {
                  self->act(self->fsm_.on_status(ec, status, self->now(), unit_random()));
                }));
      case action::wait:
        timer_.expires_after(step.at - now());
        return timer_.async_wait([self = shared_from_this()](error_code) {
          self->act(self->fsm_.on_wake(self->now()));
        });
      case action::finish:
        return finish(step.outcome, step.error);
    }
  }

  void finish(claim_outcome outcome, error_code ec) {
    on_stop_.reset();
    due_claim result;
    result.due = request_.due;
    result.outcome = outcome;
    result.attempts = fsm_.attempts();
    if (outcome == claim_outcome::claimed) result.claim = std::move(claim_);
    done_(ec, std::move(result));
  }

  client& owner_;
  claim_request request_;
  completion<error_code, due_claim> done_;
  boost::asio::strand<client::executor_type> strand_;
  boost::asio::steady_timer timer_;
  claim_fsm fsm_;
  lock claim_;
  std::optional<std::stop_callback<std::function<void()>>> on_stop_;
};

}  // namespace

void start_claim(client& owner, claim_request request, completion<error_code, due_claim> done) {
  std::make_shared<claim_op>(owner, std::move(request), std::move(done))->launch();
}

}  // namespace redlock::detail
