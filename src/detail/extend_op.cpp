#include "detail/operations.hpp"

#include <algorithm>

namespace redlock::detail {
namespace {

round_rules extend_rules(milliseconds ttl, double drift_factor, clock::time_point old_deadline) {
  round_rules rules;
  rules.ttl = ttl;
  rules.drift_factor = drift_factor;
  // The extension must be confirmed while the lock is still ours.
  rules.hard_deadline = old_deadline;
  rules.refusal_error = errc::lock_lost;
  return rules;
}

}  // namespace

extend_op::extend_op(std::shared_ptr<client_core> core, lock held, milliseconds ttl,
                     completion<error_code, lock> done)
    : core_(std::move(core)),
      held_(std::move(held)),
      ttl_(ttl),
      done_(std::move(done)),
      fsm_(core_->size(),
           extend_rules(ttl, core_->config().drift_factor, held_.validity_deadline())),
      timer_(core_->strand()) {
  core_->enroll(this);
}

extend_op::~extend_op() { core_->withdraw(this); }

void extend_op::run() {
  if (core_->closed()) return settle(quorum_fsm::state::failed);
  lock_options options;
  options.ttl = ttl_;
  error_code invalid = held_.empty()
                           ? make_error_code(errc::not_a_lock)
                           : validate(held_.resource(), options, core_->config().drift_factor);
  const auto start = clock::now();
  if (!invalid && start >= held_.validity_deadline()) invalid = errc::lock_expired;
  if (invalid) {
    finished_ = true;
    return done_(invalid, {});
  }

  fsm_.start(start);
  auto self = shared_from_this();
  const auto key = core_->key_for(held_.resource());
  const auto command = extend_command(key, held_.token(), ttl_);
  for (std::size_t i = 0; i < core_->size(); ++i) {
    send_script(core_->node(i), i, command, self);
  }
  timer_.expires_at(
      std::min(start + effective_request_timeout(options), held_.validity_deadline()));
  timer_.async_wait([self](error_code ec) {
    if (!ec && !self->finished_) self->settle(self->fsm_.on_timeout(clock::now()));
  });
}

std::string extend_op::eval_form() const {
  return extend_command(core_->key_for(held_.resource()), held_.token(), ttl_, script_call::eval);
}

void extend_op::on_reply(std::size_t node, error_code ec, const reply& r) {
  if (finished_) return;
  const auto now = clock::now();
  if (ec) return settle(fsm_.on_failed(node, ec, now));
  if (r.type == reply::kind::integer) {
    return settle(r.integer == 1 ? fsm_.on_granted(node, now) : fsm_.on_refused(node, now));
  }
  if (r.is_error()) return settle(fsm_.on_failed(node, classify_error_reply(r.text), now));
  settle(fsm_.on_failed(node, errc::protocol_error, now));
}

void extend_op::settle(quorum_fsm::state state) {
  if (state == quorum_fsm::state::pending || finished_) return;
  finished_ = true;
  timer_.cancel();
  if (core_->closed()) return done_(boost::asio::error::operation_aborted, {});
  if (state == quorum_fsm::state::reached) {
    return done_(
        {}, lock(held_.resource(), held_.token(), ttl_, fsm_.validity_deadline(), fsm_.outcomes()));
  }
  done_(fsm_.error(), lock(held_.resource(), {}, ttl_, {}, fsm_.outcomes()));
}

void extend_op::abort() { settle(quorum_fsm::state::failed); }

}  // namespace redlock::detail
