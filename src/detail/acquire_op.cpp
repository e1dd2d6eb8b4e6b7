#include "detail/acquire_op.hpp"

#include "detail/commands.hpp"
#include "detail/lock_state.hpp"
#include "detail/negative_controls.hpp"
#include "detail/random.hpp"
#include "detail/undo_op.hpp"

#include <algorithm>

namespace redlock::detail {
namespace {

/// Within what the clock's nanoseconds can hold: out-of-range values are
/// refused by run(), but the rules are made before that.
milliseconds bounded(milliseconds d) noexcept { return std::clamp(d, -max_duration, max_duration); }

acquire_rules rules_of(lock_options options, double drift_factor) {
  for (auto* d :
       {&options.ttl, &options.min_validity, &options.wait_timeout, &options.unreachable_timeout,
        &options.request_timeout, &options.retry.base_delay, &options.retry.max_delay}) {
    *d = bounded(*d);
  }
  acquire_rules rules;
  rules.round.ttl = options.ttl;
  rules.round.drift_factor = drift_factor;
  rules.round.min_validity = options.min_validity;
  rules.round.refusal_error = errc::not_acquired;
  // Held elsewhere on some nodes, the rest down: still worth waiting for a release.
  rules.round.mixed_error = errc::not_acquired;
  rules.request_timeout = effective_request_timeout(options);
  rules.retry = options.retry;
  rules.wait_timeout = options.wait_timeout;
  rules.unreachable_timeout = options.unreachable_timeout;
  rules.fenced = options.fenced;
  const auto& broken = broken_on_purpose();
  rules.round.drop_drift = broken.drop_drift;
  rules.count_late_votes = broken.count_late_votes;
  rules.skip_undo = broken.skip_undo;
  return rules;
}

}  // namespace

acquire_op::acquire_op(std::shared_ptr<client_core> core, std::vector<std::string> resources,
                       lock_options options, completion<error_code, redlock::lock> done)
    : operation(std::move(core), std::move(done)),
      resources_(std::move(resources)),
      keys_(core_->keys_for(resources_, options.reentrant_owner)),
      settings_{options.ttl, options.lock_delay, options.request_timeout, options.fenced},
      stop_token_(std::move(options.stop)),
      fsm_(core_->size(), rules_of(options, core_->config().drift_factor), &unit_random) {
  invalid_ = validate(resources_, options, core_->config().drift_factor);
  if (!invalid_) invalid_ = validate_fencing(options);
}

void acquire_op::run() {
  if (invalid_) return finish(invalid_);
  if (stop_token_.stop_requested()) return finish(boost::asio::error::operation_aborted);
  if (stop_token_.stop_possible()) {
    stop_ = std::make_unique<std::stop_callback<cancel_on_stop>>(
        std::move(stop_token_), cancel_on_stop{shared_from_this()});
  }
  execute(fsm_.start(clock::now()));
}

void acquire_op::cancel_on_stop::operator()() const {
  if (auto alive = op.lock()) alive->request_cancel();
}

void acquire_op::cancel() { execute(fsm_.on_cancel(clock::now())); }

void acquire_op::client_closed() {
  // Called through the core's list of running operations, which does not
  // own us: finishing may let go of the last other reference.
  const auto self = shared_from_this();
  // The client is closing. Its live connections still write out what they
  // hold, our SETs included, so an attempt in flight queues its undo
  // behind them; the machine completes once the closing connections have
  // failed the undo's deletes.
  execute(fsm_.on_cancel(clock::now()));
}

void acquire_op::execute(acquire_fsm::action next) {
  using kind = acquire_fsm::action::kind;
  switch (next.what) {
    case kind::none:
      return;
    case kind::send_attempt:
      return send_attempt(next);
    case kind::undo:
      last_failure_ = fsm_.round().error();
      return undo(std::move(next.undo));
    case kind::pause:
      arm_timer(next.at, next.timer_id);
      if (auto* watching = core_->observer()) watching->on_wait(resource_name());
      if (next.wait_for_release) {
        wait_for_release();
        // Our own client released the key during the attempt, before we
        // were waiting for its hand-over.
        if (!waiting_at_attempt_) {
          for (std::size_t k = 0; k < keys_.keys.size(); ++k) {
            if (core_->wakeups().released_here_since(keys_.keys[k], releases_here_at_attempt_)) {
              woken_by_ = static_cast<std::uint32_t>(k);
              return execute(fsm_.on_release_seen(true, clock::now()));
            }
          }
        }
      }
      return;
    case kind::write_back:
      return write_back(next);
    case kind::complete:
      finish(next.error);
      // We leave the line holding a release nobody else heard of (our own,
      // or one announced once): the next waiter gets it. A set's waiter
      // passed its wake-ups on as they came.
      if (next.pass_on_wake && keys_.keys.size() == 1 && !core_->closed()) {
        core_->wakeups()
            .pass_on(keys_.keys[woken_by_],
                     next.wake_here ? wake_reason::released_here : wake_reason::announced)
            .start();
      }
      return;
  }
}

void acquire_op::send_attempt(const acquire_fsm::action& next) {
  const auto attempt = fsm_.attempt();
  releases_here_at_attempt_ = core_->wakeups().releases_here();
  waiting_at_attempt_ = !waiters_.empty();
  token_ = make_token();
  attempt_start_ = clock::now();
  if (auto* watching = core_->observer(); watching && attempt > 1) {
    watching->on_retry(resource_name(), attempt, last_failure_);
  }
  // The keys outlive the validity (and a reentrant hold) by the lock-delay;
  // the rounds still count from the TTL alone.
  const auto command =
      settings_.fenced ? fenced_acquire_command(keys_, token_, settings_.ttl, settings_.lock_delay)
                       : acquire_command(keys_, token_, settings_.ttl, settings_.lock_delay);
  core_->pool().broadcast(command, [self = shared_from_this(), attempt, sent = attempt_start_](
                                       std::size_t node, error_code ec, const reply& r) {
    self->on_attempt_reply(attempt, node, sent, ec, r);
  });
  arm_timer(next.at, next.timer_id);
}

void acquire_op::on_attempt_reply(std::uint64_t attempt, std::size_t node, clock::time_point sent,
                                  error_code ec, const reply& r) {
  fenced_vote answer;
  if (settings_.fenced) {
    answer = fenced_acquire_vote(ec, r, keys_.keys.size());
  } else {
    answer.decision = acquire_vote(ec, r);
  }
  report_node(operation_kind::acquire, node, as_outcome(answer.decision), sent);
  if (!answer.loss_id.empty()) core_->fence_loss_seen(core_, node, answer.loss_id);
  if (completed()) {
    if (granted_ && attempt == fsm_.attempt() && answer.decision.what == vote::kind::refused) {
      granted_->held_elsewhere_on(node);
    }
    return;
  }
  const auto now = clock::now();
  execute(settings_.fenced ? fsm_.on_vote(attempt, node, answer.decision, answer.fences, now)
                           : fsm_.on_vote(attempt, node, answer.decision, now));
}

error_code acquire_op::validate_fencing(const lock_options& options) const {
  const auto& config = core_->config();
  if (options.fenced && options.ttl > config.max_fenced_ttl) return errc::fenced_ttl_too_long;
  // Whether fenced or not: a lock on that key would break every fenced lock.
  for (const auto& key : keys_.keys) {
    if (key == fencing_state_key) return errc::reserved_key;
  }
  return {};
}

void acquire_op::write_back(const acquire_fsm::action& next) {
  const auto attempt = fsm_.attempt();
  const auto command = fence_write_back_command(keys_, fsm_.fences(), token_);
  core_->pool().broadcast(command, [self = shared_from_this(), attempt](
                                       std::size_t node, error_code ec, const reply& r) {
    auto answer = write_back_vote(ec, r);
    if (!answer.loss_id.empty()) self->core_->fence_loss_seen(self->core_, node, answer.loss_id);
    if (self->completed()) return;
    self->execute(self->fsm_.on_written(attempt, node, answer.decision, clock::now()));
  });
  arm_timer(next.at, next.timer_id);
}

void acquire_op::undo(undo_plan plan) {
  auto self = shared_from_this();
  std::make_shared<undo_op>(
      core_, keys_, token_, settings_.lock_delay, std::move(plan),
      std::chrono::duration_cast<std::chrono::milliseconds>(fsm_.rules().request_timeout),
      attempt_start_ + settings_.ttl + settings_.lock_delay,
      [self] {
        if (self->completed()) return;
        self->execute(self->fsm_.on_undone(clock::now()));
      })
      ->run();
}

void acquire_op::arm_timer(clock::time_point at, std::uint64_t timer_id) {
  timer_id_ = timer_id;
  core_->deadlines().arm(*this, at, shared_from_this());
}

void acquire_op::on_deadline() {
  if (completed()) return;
  const auto now = clock::now();
  execute(fsm_.on_timer(timer_id_, now, held_here_until(now)));
}

void acquire_op::wait_for_release() {
  if (!waiters_.empty()) return;
  if (ticket_ == 0) ticket_ = core_->wakeups().take_ticket();
  // A release of any of our keys may make the whole set free.
  waiters_.assign(keys_.keys.size(), 0);
  for (std::size_t k = 0; k < keys_.keys.size(); ++k) wait_for_key(k);
}

void acquire_op::wait_for_key(std::size_t k) {
  waiters_[k] = core_->wakeups().wait(
      keys_.keys[k], ticket_, [self = shared_from_this(), k](wake_reason why) {
        self->waiters_[k] = 0;  // the hub has let go of it
        if (self->completed()) return;
        self->woken_by_ = static_cast<std::uint32_t>(k);
        if (self->keys_.keys.size() > 1) {
          // Another key of the set may still be held, so this wake-up may
          // not be ours to use up: the next waiter of this key hears it too
          // (before we take our place again, or it would be us).
          self->core_->wakeups().pass_on(self->keys_.keys[k], why).start();
        }
        // Stay in line across the next attempt, so a release during it is
        // not missed. The other keys' places are kept as they are.
        self->wait_for_key(k);
        self->execute(self->fsm_.on_release_seen(why == wake_reason::released_here, clock::now()));
      });
}

void acquire_op::stop_waiting() {
  for (auto id : std::exchange(waiters_, {})) {
    if (id != 0) core_->wakeups().cancel(id);
  }
}

clock::time_point acquire_op::held_here_until(clock::time_point now) {
  auto until = clock::time_point::min();
  // Only a waiter (in line for every key) can have a holder here in view.
  if (fsm_.current() != acquire_fsm::phase::pausing || waiters_.empty()) return until;
  for (const auto& key : keys_.keys) {
    until = std::max(until, core_->wakeups().held_here_until(key, keys_.owner, now));
  }
  return until;
}

std::string_view acquire_op::resource_name() const noexcept {
  return resources_.empty() ? std::string_view() : std::string_view(resources_.front());
}

void acquire_op::finish(error_code ec) {
  if (completed()) return;
  // Every caller holds a reference of its own: this one may go at the end.
  const auto armed_by = core_->deadlines().disarm(*this);
  stop_waiting();
  stop_.reset();
  report_completion(operation_kind::acquire, resource_name(), ec, fsm_.attempt());
  if (ec) {
    complete(ec, lock_access::failed(fsm_.round().outcomes()));
    return;
  }
  const auto& round = fsm_.round();
  std::uint64_t held_elsewhere = 0;  // config validation keeps N <= 64
  for (std::size_t i = 0; i < round.nodes(); ++i) {
    if (round.outcomes()[i].state == node_outcome::status::held_elsewhere) {
      held_elsewhere |= std::uint64_t{1} << i;
    }
  }
  granted_ = std::make_shared<lock_state>(core_->serial(), std::move(resources_), keys_,
                                          std::move(token_), settings_.ttl,
                                          settings_.request_timeout, round.validity_deadline(),
                                          held_elsewhere, true, settings_.lock_delay);
  if (settings_.fenced) granted_->fences = fsm_.fences();
  core_->wakeups().acquired_here(granted_);
  complete({}, lock_access::make(granted_, round.outcomes()));
  if (broken_on_purpose().settle_twice) {
    token_ = granted_->token;
    undo(undo_plan(core_->size(), undo_role::send));  // the same attempt, undone too
  }
}

}  // namespace redlock::detail
