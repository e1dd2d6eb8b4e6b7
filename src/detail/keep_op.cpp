#include "detail/keep_op.hpp"

#include "detail/extend_op.hpp"

namespace redlock::detail {

keep_op::keep_op(std::shared_ptr<client_core> core, redlock::lock held, const keep_options& options)
    : core_(std::move(core)),
      // The shared state alone: no copy of the acquire's node outcomes for
      // each kept lock (the acquired handle has them).
      held_(lock_access::make(lock_access::state(held), {})),
      on_lost_(options.on_lost),
      fsm_(keep_rules_of(options, held_.ttl(), core_->config().drift_factor, clock::now()),
           held_.validity_deadline()) {
  lease_->late_reason.store(fsm_.late_reason(), std::memory_order_relaxed);
  published_ = fsm_.signal_at().time_since_epoch().count();
  lease_->signal_at_ns.store(published_, std::memory_order_release);
}

bool lease_state::lost() const noexcept {
  if (signalled.load(std::memory_order_acquire)) return true;
  const auto now = clock::now().time_since_epoch().count();
  auto seen = signal_at_ns.load(std::memory_order_acquire);
  for (;;) {
    if (seen == seen_marker) return true;
    if (now < seen) return false;
    // Claimed once, for ever: the strand can then no longer publish a later
    // time for an extension that lands too late (its exchange fails and it
    // fires the signal). Nothing is posted: this may run on any thread, even
    // after the client's executor is gone.
    if (signal_at_ns.compare_exchange_weak(seen, seen_marker, std::memory_order_acq_rel)) {
      return true;
    }
  }
}

bool lease_state::due() const noexcept { return stopped.load(std::memory_order_acquire) || lost(); }

error_code keep_op::reason() const noexcept {
  if (lease_->signalled.load(std::memory_order_acquire)) return reason_;
  if (lost()) return lease_->late_reason.load(std::memory_order_relaxed);
  return {};
}

bool keep_op::publish_signal_time(clock::time_point at, errc reason) noexcept {
  const auto wanted = at.time_since_epoch().count();
  if (wanted == published_) return true;
  auto expected = published_;
  // Readers only ever replace our last value with the marker.
  if (!lease_->signal_at_ns.compare_exchange_strong(expected, wanted, std::memory_order_acq_rel)) {
    return false;
  }
  lease_->late_reason.store(reason, std::memory_order_relaxed);
  published_ = wanted;
  return true;
}

void keep_op::take_sightings() noexcept {
  // A reader told the work the signal's time had come: from now on the fsm
  // agrees, before any other event can give another reason.
  if (lease_->signal_at_ns.load(std::memory_order_acquire) == lease_state::seen_marker) {
    fsm_.due_seen();
  }
}

keep_op::~keep_op() {
  if (done_) return;
  core_->unwatch(lock_access::state(held_).get(), this);
  core_->keepers().unschedule(*this);
}

void keep_op::launch() {
  boost::asio::post(core_->strand(), [self = shared_from_this()] {
    if (self->done_) return;
    self->core_->enroll(self.get());
    self->enrolled_ = true;
    self->core_->watch(lock_access::state(self->held_).get(), self.get());
    if (self->core_->closed()) return self->client_closed();
    self->step();
  });
}

void keep_op::request_stop() {
  lease_->stopped.store(true);
  boost::asio::post(core_->strand(), [self = shared_from_this()] { self->step(); });
}

void keep_op::wait_lost(completion<error_code> done) {
  boost::asio::post(core_->strand(), [self = shared_from_this(), done = std::move(done)]() mutable {
    // A signal whose time has passed fires first, so the
    // wait gets its reason, never an empty one.
    self->step();
    if (self->lease_->signalled.load()) return done(self->reason_);
    if (self->done_) return done(boost::asio::error::operation_aborted);
    self->waiters_.push_back(std::move(done));
  });
}

void keep_op::on_due(clock::time_point) { step(); }

void keep_op::lock_changed() {
  // Posted: this runs inside the extend or release that found it.
  boost::asio::post(core_->strand(), [self = shared_from_this()] { self->step(); });
}

void keep_op::client_closed() {
  if (done_) return;
  take_sightings();
  fsm_.closed();
  step();
}

void keep_op::step() {
  if (done_) return;
  // Before anything the handle says: our own release must not read as a
  // release through another copy.
  if (lease_->stopped.load()) return finish();
  const auto& state = lock_access::state(held_);
  take_sightings();
  fsm_.observe(clock::now(), state->deadline(), state->found_lost.load(), state->released.load());
  for (;;) {
    const auto action = fsm_.resume(clock::now(), core_->keepers().has_room());
    switch (action.what) {
      case keep_action::kind::extend:
        send_extension(action.ttl);
        continue;
      case keep_action::kind::wait:
        // A reader may have claimed the old time just before this.
        if (!publish_signal_time(fsm_.signal_at(), fsm_.late_reason())) {
          fsm_.due_seen();
          continue;
        }
        core_->keepers().schedule(*this, action.wake_from, action.wake_at);
        if (action.wants_room) core_->keepers().wait_for_room(*this);
        return;
      case keep_action::kind::signal:
        return signal(action.reason);
      case keep_action::kind::finished:
        return finish();
    }
  }
}

void keep_op::send_extension(milliseconds ttl) {
  auto& schedule = core_->keepers();
  // The shared state alone: the node outcomes are not read here.
  auto extension = std::make_shared<extend_op>(
      core_, lock_access::make(lock_access::state(held_), {}), ttl,
      [self = shared_from_this()](error_code ec, const redlock::lock&) {
        self->core_->keepers().extension_ended();
        if (!ec && !self->done_) self->extensions_.fetch_add(1, std::memory_order_relaxed);
        self->take_sightings();
        self->fsm_.on_extended(clock::now(), ec, lock_access::state(self->held_)->deadline());
        self->step();
      },
      false);
  // Among other due keepers: with theirs, when the schedule flushes its batch.
  if (auto* batch = schedule.open_batch()) extension->send_in(*batch);
  schedule.extension_started();
  // On the strand already, maybe inside the schedule's cork.
  extension->start_here();
}

void keep_op::signal(error_code reason) {
  reason_ = reason;
  lease_->signalled.store(true, std::memory_order_release);
  if (auto* watching = core_->observer()) {
    const auto& state = lock_access::state(held_);
    watching->on_lock_lost(state->resources.empty() ? "" : state->resources.front(), reason);
  }
  if (on_lost_) {
    boost::asio::post(core_->strand().get_inner_executor(),
                      [on_lost = std::move(on_lost_), reason] { on_lost(reason); });
  }
  for (auto& waiter : std::exchange(waiters_, {})) waiter(reason);
  // Stop callbacks the work registered run here, on the client's strand.
  stop_source_.request_stop();
  finish();
}

void keep_op::finish() {
  if (done_) return;
  done_ = true;
  fsm_.stop();
  // Stopped without a signal: lost() stays false from now on, unless a
  // reader has already been told otherwise.
  if (!lease_->signalled.load()) publish_signal_time(clock::time_point::max(), errc::lock_expiring);
  core_->unwatch(lock_access::state(held_).get(), this);
  core_->keepers().unschedule(*this);
  if (std::exchange(enrolled_, false)) core_->withdraw(this);
  for (auto& waiter : std::exchange(waiters_, {})) waiter(boost::asio::error::operation_aborted);
}

}  // namespace redlock::detail
