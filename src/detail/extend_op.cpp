#include "detail/extend_op.hpp"

#include "detail/commands.hpp"
#include "detail/negative_controls.hpp"
#include "detail/vote.hpp"

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
  // Not ours on some nodes, no answer from others: a majority may still
  // hold it until the old deadline, so the handle keeps that validity.
  rules.mixed_error = errc::quorum_unreachable;
  rules.prove_refusals = true;
  rules.drop_drift = broken_on_purpose().drop_drift;
  return rules;
}

}  // namespace

extend_op::extend_op(std::shared_ptr<client_core> core, redlock::lock held, milliseconds ttl,
                     completion<error_code, redlock::lock> done, bool with_outcomes)
    : operation(std::move(core), std::move(done)),
      held_(std::move(held)),
      ttl_(ttl),
      with_outcomes_(with_outcomes),
      timer_(core_->strand()) {}

void extend_op::run() {
  const auto& state = lock_access::state(held_);
  if (!state) return finish(errc::not_a_lock);
  if (state->client != core_->serial()) return finish(errc::foreign_lock);
  if (state->released.load()) return finish(errc::lock_released);
  lock_options options;
  options.ttl = ttl_;
  if (auto invalid = validate(state->resources, options, core_->config().drift_factor)) {
    return finish(invalid);
  }
  const auto start = clock::now();
  // Read now, not when the operation was made: an extend that ran in
  // between may have moved it.
  // An adopted handle's first extend has no validity to stay within.
  const auto deadline = state->validity_known.load() ? state->deadline() : clock::time_point::max();
  if (start >= deadline) return finish(errc::lock_expired);

  round_.emplace(core_->size(), extend_rules(ttl_, core_->config().drift_factor, deadline));
  round_->start(start);
  auto self = shared_from_this();
  // Validity and quorum (and a reentrant hold's expiry) from ttl_ alone;
  // the keys also keep the lock-delay.
  start_ = start;
  const auto expiry = std::min(start + state->request_timeout_for(ttl_), deadline);
  if (auto* batch = std::exchange(batch_, nullptr); batch && state->keys.plain_single()) {
    batch->add(state->keys.keys.front(), state->token, state->key_ttl(ttl_), expiry, self);
    return;
  }
  const auto command = extend_command(state->keys, state->token, ttl_, state->lock_delay);
  core_->pool().broadcast(command, [self](std::size_t node, error_code ec, const reply& r) {
    self->on_batched_reply(node, ec, r, clock::now());
  });
  timer_armed_ = true;
  timer_.expires_at(expiry);
  timer_.async_wait([self](error_code ec) {
    if (!ec) self->on_batch_timeout(clock::now());
  });
}

void extend_op::on_batch_timeout(clock::time_point now) {
  if (completed()) return;
  refresh_never_holders();
  decided(round_->on_timeout(now));
}

void extend_op::on_batched_reply(std::size_t node, error_code ec, const reply& r,
                                 clock::time_point now) {
  const auto v = extend_vote(ec, r);
  report_node(operation_kind::extend, node, as_outcome(v), start_);
  if (completed()) return;
  refresh_never_holders();
  decided(round_->on_vote(node, v, now));
}

void extend_op::refresh_never_holders() {
  // Nodes refused by another owner at acquire time never held our key. The
  // acquire records refusals that reach it after its quorum too, maybe
  // while this round runs, so this is read before every event.
  round_->add_never_holders(lock_access::state(held_)->held_elsewhere_at_acquire);
}

void extend_op::decided(quorum_fsm::state state) {
  if (state == quorum_fsm::state::pending) return;
  const auto& lock = lock_access::state(held_);
  if (state == quorum_fsm::state::reached) {
    // Found lost meanwhile (by a concurrent extend or release): it stays so.
    if (lock->found_lost.load()) return finish(errc::lock_lost);
    lock->extended(ttl_, round_->validity_deadline());
    return finish({});
  }
  const auto error = round_->error();
  // A majority no longer holds our token: nothing may trust the lock now.
  if (error == errc::lock_lost) {
    lock->lost(clock::now());
    core_->lock_changed(lock.get());
  }
  // Any other failure changed no expiry downwards (the script never
  // shortens), so the validity the handle had still holds.
  finish(error);
}

void extend_op::cancel() { finish(boost::asio::error::operation_aborted); }

void extend_op::client_closed() { finish(boost::asio::error::operation_aborted); }

void extend_op::finish(error_code ec) {
  if (completed()) return;
  if (timer_armed_) timer_.cancel();
  const auto& state = lock_access::state(held_);
  report_completion(operation_kind::extend,
                    state && !state->resources.empty() ? state->resources.front() : "", ec);
  // Same acquisition, this round's node outcomes (none if it never started).
  const bool ran = round_ && round_->current() != quorum_fsm::state::pending;
  if (!with_outcomes_) return void(complete(ec, lock_access::make(state, {})));
  complete(ec, state ? lock_access::make(state, ran ? round_->outcomes() : held_.nodes())
                     : lock_access::failed({}));
}

}  // namespace redlock::detail
