#include "detail/acquire_fsm.hpp"

#include "detail/backoff.hpp"

#include <boost/asio/error.hpp>

#include <algorithm>

namespace redlock::detail {

using status = node_outcome::status;

acquire_fsm::acquire_fsm(std::size_t nodes, acquire_rules rules, double (*random)())
    : rules_(rules), random_(random), round_(nodes, rules.round) {
  // A set wait is the limit unless the caller limited the attempts too.
  if (!rules_.retry.max_attempts) {
    rules_.retry.max_attempts =
        rules_.wait_timeout > clock::duration::zero() ? 0U : retry_policy::default_max_attempts;
  }
}

acquire_fsm::action acquire_fsm::start(clock::time_point now) {
  if (phase_ != phase::idle) return {};
  if (rules_.wait_timeout > clock::duration::zero()) wait_deadline_ = now + rules_.wait_timeout;
  if (rules_.unreachable_timeout > clock::duration::zero()) {
    unreachable_deadline_ = now + rules_.unreachable_timeout;
  }
  return start_attempt(now);
}

acquire_fsm::action acquire_fsm::start_attempt(clock::time_point now) {
  ++attempt_;
  round_.start(now);
  attempt_start_ = now;
  failure_ = {};
  fences_.clear();
  fences_agree_ = true;
  fences_seen_ = false;
  phase_ = phase::attempting;
  wakes_at_attempt_ = wakes_;
  release_seen_ = release_seen_here_ = false;
  action next;
  next.what = action::kind::send_attempt;
  next.at = now + rules_.request_timeout;
  next.timer_id = ++timer_id_;
  return next;
}

acquire_fsm::action acquire_fsm::on_vote(std::uint64_t attempt, std::size_t node, vote v,
                                         clock::time_point now) {
  if (phase_ != phase::attempting) return {};
  // A reply to an earlier attempt is about another token: never a vote.
  if (attempt != attempt_ && !rules_.count_late_votes) return {};
  return decided(round_.on_vote(node, v, now), now, true);
}

acquire_fsm::action acquire_fsm::on_vote(std::uint64_t attempt, std::size_t node, vote v,
                                         const std::vector<std::uint64_t>& counters,
                                         clock::time_point now) {
  if (phase_ != phase::attempting || attempt != attempt_) return {};
  // Only a vote the round still takes may decide the fences.
  const bool counts = round_.current() == quorum_fsm::state::pending &&
                      round_.outcomes()[node].state == status::pending;
  if (counts && v.what == vote::kind::granted) {
    if (!fences_seen_) {
      fences_ = counters;
      fences_seen_ = true;
    } else if (counters.size() == fences_.size()) {
      for (std::size_t k = 0; k < counters.size(); ++k) {
        if (counters[k] != fences_[k]) fences_agree_ = false;
        fences_[k] = std::max(fences_[k], counters[k]);
      }
    }
  }
  return on_vote(attempt, node, v, now);
}

acquire_fsm::action acquire_fsm::on_written(std::uint64_t attempt, std::size_t node, vote v,
                                            clock::time_point now) {
  if (phase_ != phase::writing_back || attempt != attempt_) return {};
  return written(write_back_->on_vote(node, v, now), now);
}

acquire_fsm::action acquire_fsm::on_timer(std::uint64_t timer_id, clock::time_point now) {
  return on_timer(timer_id, now, clock::time_point::min());
}

acquire_fsm::action acquire_fsm::on_timer(std::uint64_t timer_id, clock::time_point now,
                                          clock::time_point held_here_until) {
  if (timer_id != timer_id_) return {};  // stale: re-armed or its phase is over
  switch (phase_) {
    case phase::attempting:
      return decided(round_.on_timeout(now), now, false);
    case phase::writing_back:
      return written(write_back_->on_timeout(now), now);
    case phase::pausing:
      // The wait deadline came with no release seen: give up as the last
      // attempt failed.
      if (!attempt_when_paused_) return complete(failure_);
      // Not past the unreachable bound: only an answer from the nodes can
      // move it, so the attempt that may end it is sent.
      if (pause_waits_for_release_ && held_here_until > now && now < unreachable_deadline_) {
        return refused_here(now);
      }
      return start_attempt(now);
    default:
      return {};
  }
}

acquire_fsm::action acquire_fsm::decided(quorum_fsm::state state, clock::time_point now,
                                         bool answered) {
  if (state == quorum_fsm::state::pending) return {};
  // Enough nodes said yes or no to an attempt made after these wake-ups
  // that it tested the resource: they were used. (Fast failures from nodes
  // that are down did not.)
  const bool quorum_answered = round_.granted() + round_.refused() >= round_.quorum();
  if (answered && quorum_answered) {
    wakes_used_ = std::max(wakes_used_, wakes_at_attempt_);
  }
  // The unreachable bound starts over unless more nodes failed than the
  // quorum can spare. (An attempt refused by a holder is decided once the
  // refusals and a down node's fast failure exceed the spare, before a
  // quorum has answered: the nodes not heard from are not known to be
  // down, and waiting on that holder is what the caller asked for.)
  const bool quorum_may_answer = round_.nodes() - round_.failed() >= round_.quorum();
  if ((quorum_answered || quorum_may_answer) &&
      rules_.unreachable_timeout > clock::duration::zero()) {
    unreachable_deadline_ = now + rules_.unreachable_timeout;
  }
  if (state == quorum_fsm::state::reached) return reached(now);
  failure_ = round_.error();
  return undo_attempt(now);
}

acquire_fsm::action acquire_fsm::reached(clock::time_point now) {
  // Agreeing counters: a majority already holds the fences.
  if (!rules_.fenced || fences_agree_) return complete({});
  // Otherwise a majority must hold them before anyone gets them; the
  // validity still counts from the attempt's start.
  phase_ = phase::writing_back;
  if (!write_back_) write_back_ = std::make_unique<quorum_fsm>(round_.nodes(), rules_.round);
  write_back_->start(attempt_start_);
  action next;
  next.what = action::kind::write_back;
  next.at = now + rules_.request_timeout;
  next.timer_id = ++timer_id_;
  return next;
}

acquire_fsm::action acquire_fsm::written(quorum_fsm::state state, clock::time_point now) {
  if (state == quorum_fsm::state::pending) return {};
  if (state == quorum_fsm::state::reached) return complete({});
  failure_ = write_back_->error();
  return undo_attempt(now);
}

acquire_fsm::action acquire_fsm::undo_attempt(clock::time_point now) {
  // Undo the attempt wherever our SET may have landed: granted, or the
  // answer lost or late; not where the key was held by another.
  phase_ = phase::undoing;
  ++timer_id_;  // the request timer is over
  action next;
  next.what = action::kind::undo;
  next.undo.reserve(round_.nodes());
  bool anything = false;
  for (const auto& o : round_.outcomes()) {
    const auto role = o.state == status::held_elsewhere ? undo_role::skip
                      : o.state == status::acquired     ? undo_role::send_and_await
                                                        : undo_role::send;
    anything = anything || role != undo_role::skip;
    next.undo.push_back(role);
  }
  // Refused everywhere (the usual failure under contention): nothing to undo.
  if (!anything || rules_.skip_undo) return after_undo(now);
  return next;
}

acquire_fsm::action acquire_fsm::on_undone(clock::time_point now) {
  if (phase_ != phase::undoing) return {};
  return after_undo(now);
}

acquire_fsm::action acquire_fsm::after_undo(clock::time_point now) {
  if (cancelled_) return complete(boost::asio::error::operation_aborted);
  const auto error = failure_;
  // Wrong credentials, certificates or topology do not heal by waiting.
  if (permanently_failed()) return complete(error);
  // No quorum has answered for unreachable_timeout: the nodes cannot answer.
  if (now >= unreachable_deadline_) return complete(error);
  auto next = next_attempt_at(rules_.retry, static_cast<unsigned>(attempt_), now,
                              clock::time_point::max(), random_());
  if (!next) return complete(error);  // out of attempts
  // The attempt that may end the unreachable bound starts no later than it.
  next = std::min(*next, unreachable_deadline_);
  // Held elsewhere: the holder's release may end the wait before the delay.
  const bool wait = rules_.retry.wake_on_release && error == errc::not_acquired;
  if (wait && release_seen_) {
    // It came while this attempt was failing: retry now (our own release
    // is queued ahead of us) or after a little jitter (another client's).
    next = std::min(*next, release_seen_here_ ? now : now + wake_jitter());
  }
  if (*next >= wait_deadline_) {
    // No retry fits before the wait deadline; a release may still come
    // before it, so a waiter listens until then.
    if (!wait || now >= wait_deadline_) return complete(error);
    auto last = pause_until(wait_deadline_, true);
    attempt_when_paused_ = false;
    return last;
  }
  return pause_until(*next, wait);
}

acquire_fsm::action acquire_fsm::pause_until(clock::time_point at, bool wait_for_release) {
  phase_ = phase::pausing;
  pause_end_ = at;
  attempt_when_paused_ = true;
  pause_waits_for_release_ = wait_for_release;
  action next;
  next.what = action::kind::pause;
  next.at = at;
  next.timer_id = ++timer_id_;
  next.wait_for_release = wait_for_release;
  return next;
}

acquire_fsm::action acquire_fsm::refused_here(clock::time_point now) {
  // What the nodes would answer, known without asking them: the attempt
  // counts (max_attempts, the backoff) as one refused, and the wake-ups
  // before it were about that lock's predecessors. No node answered, so the
  // unreachable bound stays where it was.
  ++attempt_;
  wakes_at_attempt_ = wakes_;
  wakes_used_ = std::max(wakes_used_, wakes_);
  release_seen_ = release_seen_here_ = false;
  failure_ = errc::not_acquired;
  return after_undo(now);
}

acquire_fsm::action acquire_fsm::on_release_seen(bool here, clock::time_point now) {
  if (phase_ != phase::done && phase_ != phase::idle) {
    ++wakes_;
    if (here) last_wake_here_ = wakes_;
  }
  switch (phase_) {
    case phase::attempting:
    case phase::writing_back:
    case phase::undoing:
      release_seen_ = true;
      release_seen_here_ = release_seen_here_ || here;
      return {};
    case phase::pausing:
      // Our own client's release is queued on every connection: an attempt
      // sent now runs right behind it. Jitter would only give that away.
      if (here) return start_attempt(now);
      return pause_until(std::min(now + wake_jitter(), pause_end_), true);
    default:
      return {};
  }
}

acquire_fsm::action acquire_fsm::on_cancel(clock::time_point now) {
  switch (phase_) {
    case phase::idle:
      return complete(boost::asio::error::operation_aborted);
    case phase::attempting:
      // The SETs in flight may still land: undo them before completing.
      cancelled_ = true;
      return decided(round_.abandon(boost::asio::error::operation_aborted), now, false);
    case phase::writing_back:
      cancelled_ = true;
      failure_ = boost::asio::error::operation_aborted;
      return undo_attempt(now);
    case phase::undoing:
      cancelled_ = true;  // after_undo() completes
      return {};
    case phase::pausing:
      return complete(boost::asio::error::operation_aborted);
    case phase::done:
      return {};
  }
  return {};
}

acquire_fsm::action acquire_fsm::complete(error_code error) {
  phase_ = phase::done;
  ++timer_id_;
  action next;
  next.what = action::kind::complete;
  next.error = error;
  next.pass_on_wake = error && wakes_ > wakes_used_;
  next.wake_here = last_wake_here_ > wakes_used_;
  return next;
}

bool acquire_fsm::permanently_failed() const {
  const auto lasting =
      std::count_if(round_.outcomes().begin(), round_.outcomes().end(), [](const node_outcome& o) {
        return o.state == status::failed && is_permanent_node_failure(o.error);
      });
  return static_cast<std::size_t>(lasting) > round_.nodes() - round_.quorum();
}

clock::duration acquire_fsm::wake_jitter() {
  // One waiter per client and message is woken, but every client has one.
  // Random jitter spreads them, and shrinking it with each failed attempt
  // lets the longest waiters go first.
  const auto spread = std::chrono::duration_cast<clock::duration>(std::chrono::microseconds(500));
  return std::chrono::duration_cast<clock::duration>(spread * random_() /
                                                     static_cast<double>(attempt_));
}

}  // namespace redlock::detail
