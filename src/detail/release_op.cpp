#include "detail/release_op.hpp"

#include "detail/commands.hpp"
#include "detail/vote.hpp"

#include <algorithm>

namespace redlock::detail {

release_op::release_op(std::shared_ptr<client_core> core, redlock::lock held,
                       completion<error_code, std::size_t> done)
    : operation(std::move(core), std::move(done)), held_(std::move(held)), tally_(core_->size()) {}

void release_op::run() {
  const auto& state = lock_access::state(held_);
  if (!state) return finish(errc::not_a_lock);
  if (state->client != core_->serial()) return finish(errc::foreign_lock);
  // A second release of the same acquisition (through any copy) does
  // nothing: the first one's deletes are queued, and nobody is woken twice.
  if (!state->begin_release()) return finish({});
  core_->lock_changed(state.get());

  const auto& keys = state->keys;
  // One copy of the command for every node, kept for resends too.
  const auto command = std::make_shared<const std::string>(
      release_command(keys, state->token, core_->id(), state->lock_delay));
  const auto now = clock::now();
  // The key lives at most this long: past it, a delete has nothing to do.
  const auto retry_until = std::max(now, state->deadline()) + state->key_ttl(held_.ttl());
  auto self = shared_from_this();
  {
    // This client's waiters need not wait for the announcement: an attempt
    // sent now follows the delete on every connection. Corked, the delete
    // and that attempt leave in one write per node.
    const corked batch(core_->pool());
    core_->pool().broadcast(
        command, retry_until, [self, now](std::size_t node, error_code ec, const reply& r) {
          const auto answer = release_vote(ec, r);
          self->report_node(operation_kind::release, node, as_outcome(answer), now);
          self->on_reply(answer);
        });
    // The hand-over: the first waiter of each key starts its attempt now.
    for (const auto& key : keys.keys) core_->wakeups().released_here(key).start();
  }
  if (completed()) return;
  core_->deadlines().arm(*this, clock::now() + state->request_timeout_for(held_.ttl()),
                         std::move(self));
}

void release_op::on_deadline() {
  // Too few answers to know: the undelivered deletes stay queued.
  if (!completed()) finish(errc::quorum_unreachable);
}

void release_op::on_reply(const vote& answer) {
  if (completed()) return;
  switch (tally_.on_answer(answer)) {
    case release_tally::verdict::pending:
      return;
    case release_tally::verdict::released:
      return finish({});
    case release_tally::verdict::lost:
      return finish(errc::lock_lost);
    case release_tally::verdict::unknown:
      return finish(errc::quorum_unreachable);
  }
}

void release_op::cancel() { finish(boost::asio::error::operation_aborted); }

void release_op::client_closed() {
  // Called through the core's list of running operations, which does not
  // own us: finishing may let go of the last other reference.
  const auto self = shared_from_this();
  finish(boost::asio::error::operation_aborted);
}

void release_op::finish(error_code ec) {
  if (completed()) return;
  // Every caller holds a reference of its own: this one may go at the end.
  const auto armed_by = core_->deadlines().disarm(*this);
  const auto& state = lock_access::state(held_);
  report_completion(operation_kind::release,
                    state && !state->resources.empty() ? state->resources.front() : "", ec);
  if (ec == errc::lock_lost) {
    if (state) {
      state->lost(clock::now());
      core_->lock_changed(state.get());
    }
  }
  complete(ec, tally_.removed());
}

}  // namespace redlock::detail
