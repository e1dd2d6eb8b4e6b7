#include "detail/operations.hpp"

#include "detail/backoff.hpp"
#include "detail/random.hpp"

#include <algorithm>

namespace redlock::detail {
namespace {

round_rules acquire_rules(const lock_options& options, double drift_factor) {
  round_rules rules;
  rules.ttl = options.ttl;
  rules.drift_factor = drift_factor;
  rules.min_validity = options.min_validity;
  rules.refusal_error = errc::not_acquired;
  return rules;
}

}  // namespace

acquire_op::acquire_op(std::shared_ptr<client_core> core, std::string resource,
                       lock_options options, completion<error_code, lock> done)
    : core_(std::move(core)),
      resource_(std::move(resource)),
      key_(core_->key_for(resource_)),
      options_(options),
      request_timeout_(effective_request_timeout(options)),
      done_(std::move(done)),
      fsm_(core_->size(), acquire_rules(options, core_->config().drift_factor)),
      timer_(core_->strand()) {
  core_->enroll(this);
}

acquire_op::~acquire_op() { core_->withdraw(this); }

void acquire_op::run() {
  if (core_->closed()) return complete(boost::asio::error::operation_aborted, {});
  if (auto ec = validate(resource_, options_, core_->config().drift_factor)) {
    return complete(ec, {});
  }
  if (options_.wait_timeout.count() > 0) wait_deadline_ = clock::now() + options_.wait_timeout;
  attempt();
}

void acquire_op::attempt() {
  const auto attempt = ++attempt_;
  releases_here_at_attempt_ = core_->wakeups().releases_here();
  token_ = make_token();
  const auto command = acquire_command(key_, token_, options_.ttl);
  auto self = shared_from_this();

  // Elapsed time counts from before the first send.
  const auto start = clock::now();
  fsm_.start(start);
  for (std::size_t i = 0; i < core_->size(); ++i) {
    core_->node(i).send(command, [self, attempt, i](error_code ec, const reply& r) {
      self->on_reply(attempt, i, ec, r);
    });
  }
  timer_.expires_at(start + request_timeout_);
  timer_.async_wait([self, attempt](error_code ec) {
    if (!ec) self->on_timeout(attempt);
  });
}

void acquire_op::on_reply(std::uint64_t attempt, std::size_t node, error_code ec, const reply& r) {
  // A reply to an earlier attempt, or one after the verdict, is no vote.
  if (attempt != attempt_ || fsm_.current() != quorum_fsm::state::pending || !done_) return;
  const auto now = clock::now();
  if (ec) return settle(fsm_.on_failed(node, ec, now));
  if (r.is_ok()) return settle(fsm_.on_granted(node, now));
  if (r.type == reply::kind::nil) return settle(fsm_.on_refused(node, now));
  if (r.is_error()) return settle(fsm_.on_failed(node, classify_error_reply(r.text), now));
  settle(fsm_.on_failed(node, errc::protocol_error, now));
}

void acquire_op::on_timeout(std::uint64_t attempt) {
  if (attempt != attempt_ || !done_) return;
  settle(fsm_.on_timeout(clock::now()));
}

void acquire_op::settle(quorum_fsm::state state) {
  if (state == quorum_fsm::state::pending) return;
  timer_.cancel();
  if (state == quorum_fsm::state::reached) {
    return complete(
        {}, lock(resource_, token_, options_.ttl, fsm_.validity_deadline(), fsm_.outcomes()));
  }

  // Undo the attempt on every node where our SET may have landed: granted,
  // or the answer lost or late (not where the key was held by another).
  // Wait for the nodes that are answering, not for those that timed out
  // (their release is queued behind their SET).
  const auto& outcomes = fsm_.outcomes();
  const auto refused = [](const node_outcome& o) {
    return o.state == node_outcome::status::held_elsewhere;
  };
  // Refused everywhere (the usual failure under contention): nothing to undo.
  if (std::all_of(outcomes.begin(), outcomes.end(), refused)) return on_released();
  using role = release_op::node_role;
  const auto timed_out = make_error_code(errc::node_timeout);
  release_op::plan how;
  how.nodes.reserve(outcomes.size());
  for (const auto& o : outcomes) {
    if (refused(o)) {
      how.nodes.push_back(role::skip);
    } else if (o.state == node_outcome::status::failed && o.error == timed_out) {
      how.nodes.push_back(role::send_only);
    } else {
      how.nodes.push_back(role::send_and_await);
    }
  }
  auto release = std::make_shared<release_op>(
      core_, key_, token_, request_timeout_, std::move(how),
      [self = shared_from_this()](release_op::result) { self->on_released(); });
  release->run();
}

void acquire_op::on_released() {
  if (core_->closed()) return complete(boost::asio::error::operation_aborted, {});
  const auto error = fsm_.error();
  const auto now = clock::now();
  auto next = next_attempt_at(options_.retry, static_cast<unsigned>(attempt_), now, wait_deadline_,
                              unit_random());
  if (!next) {
    return complete(error, lock(resource_, {}, options_.ttl, {}, fsm_.outcomes()));
  }
  if (options_.retry.wake_on_release && error == errc::not_acquired) {
    // Held elsewhere: the holder's release may come before the delay ends,
    // or may already have come while this attempt was failing.
    wait_for_release();
    // Our own client's release during the attempt came before we waited
    // for it: its hand-over went to someone else or to nobody.
    const bool missed_here = core_->wakeups().released_here_since(key_, releases_here_at_attempt_);
    if (std::exchange(release_seen_, false) || missed_here) {
      const bool here = std::exchange(release_seen_here_, false) || missed_here;
      next = std::min(*next, here ? now : now + wake_jitter());
    }
  }
  pause_until(*next);
}

void acquire_op::pause_until(clock::time_point at) {
  const auto pause = ++pause_;
  pausing_ = true;
  timer_.expires_at(at);
  timer_.async_wait([self = shared_from_this(), pause](error_code ec) {
    if (ec || pause != self->pause_ || !self->done_) return;
    self->pausing_ = false;
    self->attempt();
  });
}

void acquire_op::wait_for_release() {
  if (waiter_ != 0) return;
  if (ticket_ == 0) ticket_ = core_->wakeups().take_ticket();
  waiter_ = core_->wakeups().wait(
      key_, ticket_,
      [self = shared_from_this()](wakeup_hub::wake_reason why) { self->on_woken(why); });
}

void acquire_op::on_woken(wakeup_hub::wake_reason why) {
  waiter_ = 0;
  if (!done_) return;
  const bool here = why == wakeup_hub::wake_reason::released_here;
  // Stay subscribed across the next attempt, so a release during it is not missed.
  wait_for_release();
  if (!pausing_) {
    release_seen_ = true;
    release_seen_here_ = release_seen_here_ || here;
    return;
  }
  if (here) {
    // Our own client's release is queued on every connection: an attempt
    // sent now runs right behind it, ahead of anything sent later (such as
    // the releaser's own next acquire). Jitter would only give that away.
    ++pause_;
    pausing_ = false;
    timer_.cancel();
    return attempt();
  }
  pause_until(std::min(clock::now() + wake_jitter(), timer_.expiry()));
}

clock::duration acquire_op::wake_jitter() const {
  // One waiter per client and message is woken, but every client has one.
  // Random jitter spreads them, and shrinking it with each failed attempt
  // lets the longest waiters go first.
  const auto spread = std::chrono::duration_cast<clock::duration>(std::chrono::microseconds(500));
  return std::chrono::duration_cast<clock::duration>(spread * unit_random() /
                                                     static_cast<double>(attempt_));
}

void acquire_op::stop_waiting() {
  if (waiter_ != 0) core_->wakeups().cancel(std::exchange(waiter_, 0));
}

void acquire_op::abort() {
  // Only the retry pause needs ending here; every other wait ends when the
  // connections shut down.
  timer_.cancel();
  stop_waiting();
  if (fsm_.current() != quorum_fsm::state::pending) {
    complete(boost::asio::error::operation_aborted, {});
  }
}

void acquire_op::complete(error_code ec, lock result) {
  if (!done_) return;
  stop_waiting();
  auto done = std::move(done_);
  done_ = {};
  done(ec, std::move(result));
}

}  // namespace redlock::detail
