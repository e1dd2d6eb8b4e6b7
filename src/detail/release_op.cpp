#include "detail/release_op.hpp"

#include "detail/commands.hpp"

#include <algorithm>

namespace redlock::detail {

release_op::release_op(std::shared_ptr<node_set> nodes, redlock::lock held,
                       completion<error_code, std::size_t> done)
    : operation(std::move(nodes), std::move(done)),
      held_(std::move(held)),
      timer_(nodes_->strand()) {}

void release_op::run() {
  const auto& state = lock_access::state(held_);
  if (!state) return finish(errc::not_a_lock);
  if (state->client != nodes_->serial()) return finish(errc::foreign_lock);
  // A second release of the same acquisition (through any copy) does
  // nothing: the first one's deletes are queued, and nobody is woken twice.
  if (!state->begin_release()) return finish({});

  const auto key = nodes_->key_for(state->resource);
  // One copy of the command for every node, kept for resends too.
  const auto command = std::make_shared<const std::string>(
      release_command(key, state->token, release_channel(key), nodes_->id()));
  const auto now = clock::now();
  // The key lives at most this long: past it, a delete has nothing to do.
  const auto retry_until = std::max(now, state->deadline()) + held_.ttl();
  auto self = shared_from_this();
  {
    // This client's waiters need not wait for the announcement: an attempt
    // sent now follows the delete on every connection. Corked, the delete
    // and that attempt leave in one write per node.
    const corked batch(*nodes_);
    for (std::size_t i = 0; i < nodes_->size(); ++i) {
      ++outstanding_;
      nodes_->node(i).send(
          command, [self](error_code ec, const reply& r) { self->on_reply(ec, r); }, retry_until);
    }
    nodes_->wakeups().released_here(key);
  }
  lock_options timing;
  timing.ttl = held_.ttl();
  timer_.expires_after(effective_request_timeout(timing));
  timer_.async_wait([self](error_code ec) {
    if (ec || self->completed()) return;
    // Too few answers to know: the undelivered deletes stay queued.
    self->finish(errc::quorum_unreachable);
  });
}

void release_op::on_reply(error_code ec, const reply& r) {
  --outstanding_;
  if (completed()) return;
  // A 0 from a delete sent again after a reconnect is no evidence: the
  // first copy may have deleted our key. It counts as no answer.
  if (!ec && r.type == reply::kind::integer && !(r.repeated && r.integer == 0)) {
    ++answered_;
    if (r.integer == 1) ++removed_;
  }
  const auto quorum = nodes_->quorum();
  // Enough deletes: nobody can be refused for lack of a quorum because of us.
  if (removed_ >= quorum) return finish({});
  // A majority did not hold our token: it had lapsed (or was never there).
  if (answered_ - removed_ > nodes_->size() - quorum) return finish(errc::lock_lost);
  if (outstanding_ == 0) finish(errc::quorum_unreachable);
}

void release_op::cancel() { finish(boost::asio::error::operation_aborted); }

void release_op::abort() { finish(boost::asio::error::operation_aborted); }

void release_op::finish(error_code ec) {
  if (completed()) return;
  timer_.cancel();
  if (ec == errc::lock_lost) {
    if (const auto& state = lock_access::state(held_)) state->lost(clock::now());
  }
  complete(ec, removed_);
}

}  // namespace redlock::detail
